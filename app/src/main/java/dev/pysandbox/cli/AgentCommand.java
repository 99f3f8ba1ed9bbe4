package dev.pysandbox.cli;

import dev.pysandbox.api.agent.AgentCancelResult;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunList;
import dev.pysandbox.api.op.Operations;
import picocli.CommandLine.Command;

/**
 * {@code pysandbox agent run|show|list|cancel}: agent runs (issue 26). {@code run} works in this
 * process ({@link AgentRunCommand}); the others look at the data directory's record of the tenant's
 * agent runs, those of servers sharing it included.
 */
@Command(
    name = "agent",
    description = "Run a model that writes and runs Python; show, list or cancel agent runs.",
    subcommands = {
      AgentRunCommand.class,
      AgentCommand.ShowAgentRun.class,
      AgentCommand.ListAgentRuns.class,
      AgentCommand.CancelAgentRun.class
    })
final class AgentCommand extends CommandGroup {
  @Command(
      name = "show",
      description = "One agent run: its status, budgets, every step and its answer.")
  static final class ShowAgentRun extends TenantOperationCommand<AgentRunInfo> {
    ShowAgentRun() {
      super(OperationOptions.of(Operations.AGENT_STATUS).positional("agent_run_id"));
    }

    @Override
    void print(AgentRunInfo run) {
      AgentText.show(run, System.out);
    }
  }

  @Command(name = "list", description = "List agent runs, newest first.")
  static final class ListAgentRuns extends TenantOperationCommand<AgentRunList> {
    private static final String ROW = "%-20s  %-16s  %-24s  %5s  %8s  %s%n";

    ListAgentRuns() {
      super(
          OperationOptions.of(Operations.LIST_AGENT_RUNS)
              .option("status")
              .option("limit")
              .option("cursor"));
    }

    @Override
    void print(AgentRunList list) {
      System.out.printf(ROW, "AGENT RUN", "STATUS", "CREATED", "ITER", "TOKENS", "TASK");
      for (AgentRunInfo r : list.agentRuns()) {
        System.out.printf(
            ROW,
            r.agentRunId(),
            r.status().wireName(),
            r.createdAt(),
            r.usage().iterations(),
            r.usage().totalTokens(),
            AgentText.firstLine(r.task()));
      }
      System.out.printf(
          "(%d agent runs%s)%n",
          list.agentRuns().size(),
          list.nextCursor() == null ? "" : "; more with --cursor " + list.nextCursor());
    }
  }

  @Command(
      name = "cancel",
      description = {
        "Cancel an agent run: the model call or code run in flight is stopped.",
        "One running in a server is cancelled through that server (agent_cancel, or POST"
            + " /api/v1/agent-runs/ID/cancel)."
      })
  static final class CancelAgentRun extends TenantOperationCommand<AgentCancelResult> {
    CancelAgentRun() {
      super(OperationOptions.of(Operations.AGENT_CANCEL).positional("agent_run_id"));
    }

    @Override
    void print(AgentCancelResult r) {
      System.out.println(r.agentRunId() + ": " + r.status().wireName() + " (" + r.message() + ")");
    }
  }
}
