package dev.pysandbox.cli;

import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.agent.AgentEvent;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentService;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pysandbox agent run "TASK"}: an agent run in this process on the data directory, as {@code
 * pysandbox run} runs code: each step printed on stderr as it happens, the answer on stdout, a
 * summary on stderr; exits 0 when it succeeded and 1 when it failed, ran out of a budget or was
 * cancelled. Ctrl-C cancels it (recorded as cancelled) before the process exits. The model is the
 * server's {@code agent_provider}: with {@code sampling} (the default) there is no client here to
 * lend one, and the core refuses with what to set instead.
 */
@Command(
    name = "run",
    description = {
      "Give a task to a model that writes and runs Python here, printing each step as it happens.",
      "The model is agent_provider's (e.g. --set agent_provider=openai with"
          + " PYSANDBOX_AGENT_API_KEY): sampling needs an MCP client, which the command line is"
          + " not."
    })
final class AgentRunCommand extends ServiceCommand {
  /** How long Ctrl-C waits for the cancelled agent run's end to be printed. */
  private static final long CANCEL_GRACE_SECONDS = 5;

  @Option(names = "--json", description = "Print the agent run, steps included, as JSON instead.")
  boolean json;

  AgentRunCommand() {
    super(
        OperationOptions.of(Operations.AGENT_RUN)
            .positional("task")
            .option("model")
            .option("session_id", "--session")
            .option("token_budget")
            .option("max_iterations")
            .option("time_budget_seconds", "--time-budget"));
  }

  @Override
  public Integer call() throws InterruptedException {
    Arguments args = args();
    try (OperatorService service = startService()) {
      AgentRunInfo begun = recorded(service, args);
      if (!json) {
        System.err.println(
            "[pysandbox] agent run "
                + begun.agentRunId()
                + " started in session "
                + begun.sessionId()
                + " (Ctrl-C cancels it)");
      }
      AgentRunInfo end = follow(service.agents(), begun.agentRunId());
      if (json) {
        printJson(end);
      } else {
        System.err.println(AgentText.summary(end));
      }
      return AgentText.exitCode(end);
    }
  }

  /**
   * Prints the agent run's events until its end, which it returns; Ctrl-C meanwhile cancels it and
   * lets its end be printed before the process exits.
   */
  private AgentRunInfo follow(AgentService agents, String agentRunId) throws InterruptedException {
    BlockingQueue<AgentEvent> events = new LinkedBlockingQueue<>();
    CountDownLatch over = new CountDownLatch(1);
    Thread cancelOnExit =
        new Thread(
            () -> {
              try {
                agents.cancel(agentRunId);
                over.await(CANCEL_GRACE_SECONDS, TimeUnit.SECONDS);
              } catch (PysandboxException e) {
                System.err.println("pysandbox: " + e.getMessage());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "pysandbox-agent-cancel");
    Runtime.getRuntime().addShutdownHook(cancelOnExit);
    AutoCloseable watch = agents.watch(agentRunId, 0, events::add);
    try {
      while (true) {
        AgentEvent e = events.take();
        if (!json) {
          AgentText.event(e, System.out, System.err);
        }
        if ("done".equals(e.type())) {
          return e.run();
        }
      }
    } finally {
      over.countDown();
      closeQuietly(watch);
      try {
        Runtime.getRuntime().removeShutdownHook(cancelOnExit);
      } catch (IllegalStateException e) {
        // the process is exiting (Ctrl-C): the hook is running
      }
    }
  }

  private static void closeQuietly(AutoCloseable watch) {
    try {
      watch.close();
    } catch (Exception e) {
      // removing a watcher has nothing to report: the agent run goes on or is over either way
    }
  }

  /** Starts the agent run and records the call in the trajectory as agent_run by the CLI. */
  private static AgentRunInfo recorded(OperatorService service, Arguments args) {
    Map<String, Object> given = new LinkedHashMap<>();
    given.put("task", args.string("task"));
    for (String name : new String[] {"model", "session_id"}) {
      if (args.string(name) != null) {
        given.put(name, args.string(name));
      }
    }
    String tool = Operations.AGENT_RUN.name();
    long began = System.nanoTime();
    try {
      AgentRunInfo r = OperationCalls.call(Operations.AGENT_RUN, service, args);
      service.recordCall(
          CallRecord.answered(
              CallRecord.Face.CLI, tool, given, r, null, System.nanoTime() - began));
      return r;
    } catch (PysandboxException e) {
      service.recordCall(
          CallRecord.failed(
              CallRecord.Face.CLI, tool, given, e.code(), null, System.nanoTime() - began));
      throw e;
    }
  }
}
