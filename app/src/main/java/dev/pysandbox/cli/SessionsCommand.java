package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code pysandbox sessions list|close}: the sessions of the servers (say, an MCP server) that
 * share this data directory. Sessions live in the server that opened them; closing one asks that
 * server to close it.
 */
@Command(
    name = "sessions",
    description = "Show or close the sessions of servers using this data directory.",
    subcommands = {SessionsCommand.ListSessions.class, SessionsCommand.CloseSession.class})
final class SessionsCommand extends CommandGroup {
  @Command(
      name = "list",
      description = {
        "List open sessions.",
        "A session whose server is gone shows as lost (the next server records it so)."
      })
  static final class ListSessions extends ListingCommand<List<SessionInfo>> {
    @Override
    List<SessionInfo> ofEveryTenant(OperatorService service, Arguments args) {
      return service.allRecordedSessions();
    }

    @Override
    List<SessionInfo> ofTenant(SandboxService tenant, Arguments args) {
      return tenant.listRecordedSessions();
    }

    @Override
    void print(List<SessionInfo> all) {
      header(
          "%-24s  %-8s  %-12s  %-24s  %-24s  %5s  %10s%n",
          "SESSION", "STATE", "TIER", "CREATED", "LAST USED", "RUNS", "BYTES");
      for (SessionInfo s : all) {
        row(
            "%-24s  %-8s  %-12s  %-24s  %-24s  %5d  %10d%s%n",
            s.tenant(),
            s.sessionId(),
            s.ended() != null ? s.ended().as() : s.state().wireName(),
            s.tier() == null ? "-" : s.tier(),
            s.createdAt(),
            s.lastUsedAt(),
            s.runCount(),
            s.workspaceBytes(),
            s.ended() != null
                ? "  (" + TerminalText.escape(s.ended().reason()) + ")"
                : s.deadReason() == null ? "" : "  (" + TerminalText.escape(s.deadReason()) + ")");
      }
      System.out.printf("(%d sessions)%n", all.size());
    }
  }

  @Command(name = "close", description = "Close a session (its server kills its sandbox).")
  static final class CloseSession extends ServiceCommand {

    @Mixin TenantOption tenant;

    CloseSession() {
      super(OperationOptions.of(Operations.CLOSE_SESSION).positional("session_id"));
    }

    @Override
    public Integer call() {
      Arguments args = args();
      String sessionId = args.string("session_id");
      try (OperatorService service = openReadOnly()) {
        OperationCalls.call(Operations.CLOSE_SESSION, tenant.of(service), args);
        System.out.println("session " + sessionId + " closed");
        return 0;
      }
    }
  }
}
