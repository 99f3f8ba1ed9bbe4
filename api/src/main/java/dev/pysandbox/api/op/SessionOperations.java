package dev.pysandbox.api.op;

import static dev.pysandbox.api.op.CommonParams.packages;
import static dev.pysandbox.api.op.CommonParams.sessionId;
import static dev.pysandbox.api.op.Operation.Effect.DESTRUCTIVE;
import static dev.pysandbox.api.op.Operation.Effect.IDEMPOTENT_WRITE;
import static dev.pysandbox.api.op.Operation.Effect.READ;

import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionList;
import java.util.List;

/**
 * The operations on sessions and their variables: create_session, list_sessions, close_session,
 * get_context, set_context, clear_context. Part of the catalogue {@link Operations}, which names
 * them all.
 */
final class SessionOperations {
  private SessionOperations() {}

  // -- sessions ----------------------------------------------------------------------------------

  public static final Operation CREATE_SESSION =
      new Operation(
          "create_session",
          "Create a session",
          "Open a stateful Python session: variables and files in /mnt/data persist between"
              + " run_python calls that name it. Returns the session (an existing one with the"
              + " same id is returned as it is).",
          IDEMPOTENT_WRITE,
          List.of(
              Param.id("session_id", "Omit to get a generated sess_ + 12 hex id."),
              Param.integer(
                      "ttl_minutes", "Idle minutes before the session is closed (default 30).")
                  .min(1)
                  .max(SessionInfo.MAX_TTL_MINUTES),
              Param.id(
                  "tier",
                  "The session's tier, for its whole life: network, read-only host directories"
                      + " (/mnt/host/<name> in the filesystem tier), import policy and default"
                      + " limits (check_setup lists the tiers this server allows; default: the"
                      + " server's tier_default, basic). A tier the server does not allow is"
                      + " refused with forbidden."),
              Param.integer(
                      "memory_limit_mb",
                      "Memory of the session's sandbox in MiB, no swap (default: the tier's, 512"
                          + " in basic; check_setup shows the maximum). Passing it kills the process that"
                          + " allocates: the run ends with kill_reason memory_limit.")
                  .min(LimitRequest.MIN_MEMORY_MB),
              Param.integer(
                      "pids_limit",
                      "Processes and threads at once (default: the tier's, 128 in basic).")
                  .min(LimitRequest.MIN_PIDS),
              Param.number(
                      "cpu_limit",
                      "CPU cores the session may use (default: the tier's, 1 in basic).")
                  .min(LimitRequest.MIN_CPUS),
              Param.integer(
                      "disk_quota_mb",
                      "Total size of the files in /mnt/data in MiB (server default 1024).")
                  .min(LimitRequest.MIN_DISK_QUOTA_MB),
              packages(
                  "Packages the session's sandbox has for its whole life: PEP 508 requirements"
                      + " (at most 50; no URLs, paths or pip options), installed once into a"
                      + " cached environment through the server's package index and mounted"
                      + " read-only; the code still has no network."),
              Param.strings(
                  "network_allow",
                  "In a tier with network (network): the hosts the session's code may reach,"
                      + " narrower than the server's network_allow (each pattern must be covered"
                      + " by one of the server's; default: the server's list).")),
          SessionInfo.class);

  public static final Operation LIST_SESSIONS =
      new Operation(
          "list_sessions",
          "List sessions",
          "List open sessions with state, creation and last use, run count and workspace size;"
              + " with include_ended, also those that ended within the server's"
              + " session_retention (state closed, with ended: how — expired, closed, lost or"
              + " failed —, when and why), whose ids answer session_expired, session_closed or"
              + " session_lost until then.",
          READ,
          List.of(
              Param.bool(
                      "include_ended",
                      "Also list the sessions that ended within session_retention.")
                  .defaultValue(false)),
          SessionList.class);

  public static final Operation CLOSE_SESSION =
      new Operation(
          "close_session",
          "Close a session",
          "Kill a session's sandbox and delete its workspace.",
          DESTRUCTIVE,
          List.of(sessionId()),
          SessionInfo.class);

  public static final Operation GET_CONTEXT =
      new Operation(
          "get_context",
          "Get session variables",
          "Return a session's global variables: JSON values as they are, others as type and"
              + " repr.",
          READ,
          List.of(
              sessionId(),
              Param.strings("names", "Globals to return; omit for all (modules excluded).")),
          ContextSnapshot.class);

  public static final Operation SET_CONTEXT =
      new Operation(
          "set_context",
          "Set session variables",
          "Set global variables of a session from a JSON object.",
          IDEMPOTENT_WRITE,
          List.of(
              sessionId(),
              Param.object("values", "Each key becomes a global with its JSON value.").required()),
          ContextSnapshot.class);

  public static final Operation CLEAR_CONTEXT =
      new Operation(
          "clear_context",
          "Clear session variables",
          "Reset a session's globals (variables and imports are gone; files stay).",
          DESTRUCTIVE,
          List.of(sessionId()),
          SessionInfo.class);
}
