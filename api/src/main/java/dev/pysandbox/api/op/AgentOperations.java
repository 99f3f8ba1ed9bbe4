package dev.pysandbox.api.op;

import static dev.pysandbox.api.op.CommonParams.packages;
import static dev.pysandbox.api.op.Operation.Effect.DESTRUCTIVE;
import static dev.pysandbox.api.op.Operation.Effect.READ;
import static dev.pysandbox.api.op.Operation.Effect.WRITE;

import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.WireEnum;
import dev.pysandbox.api.agent.AgentBudgets;
import dev.pysandbox.api.agent.AgentCancelResult;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunList;
import dev.pysandbox.api.agent.AgentRunRequest;
import dev.pysandbox.api.agent.AgentRunStatus;
import java.util.Arrays;
import java.util.List;

/**
 * The operations of agent runs (issue 26): agent_run, agent_status, agent_cancel, list_agent_runs.
 * Part of the catalogue {@link Operations}, which names them all.
 */
final class AgentOperations {
  private AgentOperations() {}

  /** Every agent run status, as list_agent_runs filters by them. */
  static final List<String> AGENT_STATUSES =
      Arrays.stream(AgentRunStatus.values()).map(AgentRunStatus::wireName).toList();

  private static Param agentRunId() {
    return Param.id("agent_run_id", "The agent run's id (agr_ + 16 hex), as agent_run gave it.")
        .required();
  }

  private static Param waitSeconds(String what) {
    return Param.integer(
            "wait_seconds",
            "Wait up to this many seconds (at most 60) for the agent run to end, then answer "
                + what
                + " as it stands.")
        .min(0)
        .max(SandboxService.MAX_WAIT_SECONDS)
        .defaultValue(0);
  }

  public static final Operation AGENT_RUN =
      new Operation(
          "agent_run",
          "Run an agent",
          "Give a task to a language model that writes Python and runs it here, in a sandboxed"
              + " session, reads the results and goes on until it answers or a budget runs out."
              + " Each code run is an ordinary recorded run of the session (limits, tier,"
              + " approvals). The model is the server's agent_provider: over MCP by default the"
              + " client's own model (sampling). Returns agent_run_id and its state; follow it"
              + " with agent_status, stop it with agent_cancel.",
          WRITE,
          List.of(
              Param.string("task", "What the agent is to do, in words (at most 64 KiB).")
                  .required(),
              Param.id(
                  "session_id",
                  "Work in this session (its variables and files); omit for a fresh session of"
                      + " its own, kept open after the run."),
              Param.string(
                  "model",
                  "The model to ask (default: the server's agent_model, or the client's choice"
                      + " over sampling)."),
              Param.integer(
                      "max_iterations",
                      "Model replies at most (default: the server's agent_max_iterations, 12).")
                  .min(1)
                  .max(AgentBudgets.MAXIMA.maxIterations()),
              Param.integer(
                      "max_depth", "How deep llm_query calls from the code may nest (default 4).")
                  .min(1)
                  .max(AgentBudgets.MAXIMA.maxDepth()),
              Param.integer(
                      "max_subcalls",
                      "llm_query calls the code may make in all (default 12; 0: none).")
                  .min(0)
                  .max(AgentBudgets.MAXIMA.maxSubcalls()),
              Param.longInteger(
                      "token_budget",
                      "Prompt plus completion tokens in all, sub-calls included (default 8000).")
                  .min(1)
                  .max(AgentBudgets.MAXIMA.tokenBudget()),
              Param.integer(
                      "time_budget_seconds",
                      "Seconds from start to end, model calls and code runs included (default"
                          + " 300).")
                  .min(1)
                  .max(AgentBudgets.MAXIMA.timeBudgetSeconds()),
              Param.id("tier", "The tier of the agent's own session (without session_id)."),
              packages("Packages of the agent's own session (without session_id)."),
              waitSeconds("it")),
          AgentRunInfo.class);

  public static final Operation AGENT_STATUS =
      new Operation(
          "agent_status",
          "Get an agent run",
          "An agent run's status, answer, every step (the model's text, the code, each run's"
              + " run_id, status and a short output, tokens, duration), usage, budgets and what"
              + " is left of them, and why it stopped.",
          READ,
          List.of(agentRunId(), waitSeconds("it")),
          AgentRunInfo.class);

  public static final Operation AGENT_CANCEL =
      new Operation(
          "agent_cancel",
          "Cancel an agent run",
          "Stop an agent run: the model call in flight is abandoned, the code run in flight is"
              + " cancelled (its session stays usable). The agent run stays cancelled.",
          DESTRUCTIVE,
          List.of(agentRunId()),
          AgentCancelResult.class);

  public static final Operation LIST_AGENT_RUNS =
      new Operation(
          "list_agent_runs",
          "List agent runs",
          "The caller's agent runs, newest first, without their steps.",
          READ,
          List.of(
              Param.integer("limit", "Agent runs per page (1-1000).")
                  .min(1)
                  .max(1000)
                  .defaultValue(20),
              Param.string("cursor", "next_cursor of the previous page."),
              Param.string("status", "Only agent runs in this state.").oneOf(AGENT_STATUSES)),
          AgentRunList.class);

  static void bind(java.util.function.BiConsumer<Operation, OperationCalls.Call> bind) {
    bind.accept(AGENT_RUN, (s, a, l) -> s.agents().start(agentRunRequest(a), l.clientModel()));
    bind.accept(
        AGENT_STATUS,
        (s, a, l) -> s.agents().status(a.string("agent_run_id"), a.integer("wait_seconds")));
    bind.accept(AGENT_CANCEL, (s, a, l) -> s.agents().cancel(a.string("agent_run_id")));
    bind.accept(
        LIST_AGENT_RUNS,
        (s, a, l) -> {
          String status = a.string("status");
          return s.agents()
              .list(
                  a.integer("limit"),
                  a.string("cursor"),
                  status == null ? null : WireEnum.parse(AgentRunStatus.class, status));
        });
  }

  /** An agent_run call's request. */
  public static AgentRunRequest agentRunRequest(Arguments a) {
    return new AgentRunRequest(
        a.string("task"),
        a.string("session_id"),
        a.string("model"),
        a.integer("max_iterations"),
        a.integer("max_depth"),
        a.integer("max_subcalls"),
        a.longInteger("token_budget"),
        a.integer("time_budget_seconds"),
        a.string("tier"),
        a.strings("packages"),
        a.integer("wait_seconds"));
  }
}
