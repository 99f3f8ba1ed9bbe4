package dev.pysandbox.api;

import dev.pysandbox.util.RandomIds;
import java.util.regex.Pattern;

/**
 * The one rule for the ids a caller names (sessions, runs, API keys): 1-64 letters, digits, '_' and
 * '-'. Ids end up in file names, cgroup names and URIs, so nothing else may get through. Every
 * check of an id, every schema pattern and every URI template takes the rule from here, and every
 * id the server makes up for a run, a session or an API key is made here. Tenant names have their
 * own, narrower rule ({@link #TENANT_REGEX}), here too.
 */
public final class Ids {
  /** The rule as a regular expression, unanchored (use it with {@code matches()}). */
  public static final String REGEX = "[A-Za-z0-9_-]{1,64}";

  public static final Pattern PATTERN = Pattern.compile(REGEX);

  /**
   * The rule for a tenant name, unanchored: 1-63 lowercase letters, digits, '_' and '-', starting
   * with a letter or a digit (so that it can name a directory, a cgroup or a DNS label as it is).
   */
  public static final String TENANT_REGEX = "[a-z0-9][a-z0-9_-]{0,62}";

  public static final Pattern TENANT_PATTERN = Pattern.compile(TENANT_REGEX);

  private Ids() {}

  /** A new run id: {@code run_} and 20 random hex digits. */
  public static String newRunId() {
    return "run_" + RandomIds.hex(10);
  }

  /** A new session id, for a session the caller did not name: {@code sess_} and 12 hex digits. */
  public static String newSessionId() {
    return "sess_" + RandomIds.hex(6);
  }

  /** A new API key's public id: {@code key_} and 12 hex digits. */
  public static String newKeyId() {
    return "key_" + RandomIds.hex(6);
  }

  /**
   * @return {@code id}, when it follows the rule
   * @throws PysandboxException {@code invalid_argument} naming the argument and the rule, also when
   *     {@code id} is {@code null}
   */
  public static String require(String argument, String id) {
    if (id == null || !PATTERN.matcher(id).matches()) {
      throw PysandboxException.invalid(
          argument
              + " "
              + PysandboxException.quote(id)
              + " is invalid: use 1-64 characters of letters, digits, '_' and '-'");
    }
    return id;
  }

  /** {@link #require} for a {@code session_id}. */
  public static String requireSessionId(String sessionId) {
    return require("session_id", sessionId);
  }

  /** {@link #require} for a {@code run_id}. */
  public static String requireRunId(String runId) {
    return require("run_id", runId);
  }

  /** {@link #require} for a tier's name. */
  public static String requireTier(String tier) {
    return require("tier", tier);
  }

  /** {@link #require} for an {@code approval_id} ({@code apr_} + 16 hex). */
  public static String requireApprovalId(String approvalId) {
    return require("approval_id", approvalId);
  }

  /** A new approval id: {@code apr_} and 16 hex digits. */
  /** A new agent run's id: {@code agr_} + 16 hex. */
  public static String newAgentRunId() {
    return "agr_" + RandomIds.hex(8);
  }

  public static String requireAgentRunId(String agentRunId) {
    return require("agent_run_id", agentRunId);
  }

  public static String newApprovalId() {
    return "apr_" + RandomIds.hex(8);
  }

  /** A new security event's id: {@code evt_} and 16 hex digits. */
  public static String newEventId() {
    return "evt_" + RandomIds.hex(8);
  }

  /** {@link #require} for an API key's {@code key_id}. */
  public static String requireKeyId(String keyId) {
    return require("key_id", keyId);
  }

  /**
   * @return {@code tenant}, when it follows {@link #TENANT_REGEX}
   * @throws PysandboxException {@code invalid_argument} naming the rule, also when {@code tenant}
   *     is {@code null}
   */
  public static String requireTenant(String tenant) {
    if (tenant == null || !TENANT_PATTERN.matcher(tenant).matches()) {
      throw PysandboxException.invalid(
          "tenant "
              + PysandboxException.quote(tenant)
              + " is invalid: use 1-63 characters of lowercase letters, digits, '_' and '-',"
              + " starting with a letter or a digit");
    }
    return tenant;
  }
}
