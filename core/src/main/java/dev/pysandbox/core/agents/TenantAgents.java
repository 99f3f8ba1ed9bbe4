package dev.pysandbox.core.agents;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.agent.AgentBudgets;
import dev.pysandbox.api.agent.AgentCancelResult;
import dev.pysandbox.api.agent.AgentEvent;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunList;
import dev.pysandbox.api.agent.AgentRunRequest;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentService;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentUsage;
import dev.pysandbox.api.agent.ModelClient;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.function.Consumer;

/** {@link AgentService} for one tenant: its agent runs only; another's is not_found. */
final class TenantAgents implements AgentService {
  private final AgentRuns runs;
  private final String tenant;
  private final SandboxService service;

  TenantAgents(AgentRuns runs, String tenant, SandboxService service) {
    this.runs = runs;
    this.tenant = tenant;
    this.service = service;
  }

  @Override
  public AgentRunInfo start(AgentRunRequest request, ModelClient clientModel) {
    AgentBudgets budgets = request.budgets(runs.config.budgets());
    ModelClient model = runs.modelFor(clientModel);
    boolean own = request.sessionId() == null;
    SessionInfo session =
        own
            ? service.createSession(
                null, null, LimitRequest.DEFAULTS, request.tier(), request.packages())
            : service.getSession(request.sessionId());
    String modelName =
        request.model() != null
            ? request.model()
            : model.defaultModel() == null || model.defaultModel().isEmpty()
                ? null
                : model.defaultModel();
    AgentRunInfo info =
        new AgentRunInfo(
            Ids.newAgentRunId(),
            tenant,
            AgentRunStatus.RUNNING,
            request.task(),
            model.provider(),
            modelName,
            session.sessionId(),
            own,
            null,
            null,
            null,
            null,
            null,
            List.of(),
            AgentUsage.NONE,
            budgets,
            budgets.use(AgentUsage.NONE, 0),
            runs.time.instant().truncatedTo(ChronoUnit.MILLIS).toString(),
            null);
    LiveAgentRun live = new LiveAgentRun(info);
    AgentRuns.Live[] entry = new AgentRuns.Live[1];
    AgentLedger ledger =
        new AgentLedger(
            live,
            runs.recorder,
            runs.time,
            runs.config.recordContent(),
            () -> {
              runs.ended(info.agentRunId());
              runs.recorder.notebookLater(live.snapshot(), service);
            });
    entry[0] = new AgentRuns.Live(tenant, live, ledger, service);
    runs.admit(tenant, entry[0]);
    try {
      runs.recorder.started(info);
    } catch (RuntimeException e) {
      runs.forget(info.agentRunId());
      throw e;
    }
    AgentContext context =
        new AgentContext(
            runs.config, service, session.sessionId(), runs.interpreter, runs.runTimeoutSeconds);
    runs.start(entry[0], new AgentLoop(ledger, service, model, modelName, context));
    live.await(request.waitSeconds());
    return live.snapshot();
  }

  @Override
  public AgentRunInfo status(String agentRunId, int waitSeconds) {
    Ids.requireAgentRunId(agentRunId);
    if (waitSeconds < 0 || waitSeconds > SandboxService.MAX_WAIT_SECONDS) {
      throw PysandboxException.invalid(
          "wait_seconds " + waitSeconds + " is out of range: use 0 to 60");
    }
    AgentRuns.Live l = mine(agentRunId);
    if (l != null) {
      l.run().await(waitSeconds);
      return l.run().snapshot();
    }
    return stored(agentRunId);
  }

  @Override
  public AgentCancelResult cancel(String agentRunId) {
    Ids.requireAgentRunId(agentRunId);
    AgentRuns.Live l = mine(agentRunId);
    if (l != null && l.ledger().stop(AgentRunStatus.CANCELLED, "cancelled by a caller")) {
      runs.stopInFlight(l);
      return new AgentCancelResult(
          agentRunId, true, AgentRunStatus.CANCELLED, "cancelled; what was in flight is stopped");
    }
    AgentRunInfo info = l != null ? l.run().info() : stored(agentRunId);
    if (info.status().finished()) {
      return new AgentCancelResult(
          agentRunId, false, info.status(), "it had already ended (" + info.status() + ")");
    }
    throw new PysandboxException(
        ErrorCode.SESSION_BUSY,
        "agent run "
            + agentRunId
            + " runs in another pysandbox server process on this data directory: cancel it"
            + " through that server");
  }

  @Override
  public AgentRunList list(int limit, String cursor, AgentRunStatus status) {
    if (limit < 1 || limit > 1000) {
      throw PysandboxException.invalid("limit " + limit + " is out of range: use 1 to 1000");
    }
    AgentRunList page = runs.store.get().list(tenant, limit, cursor, status);
    // Those live or just ended here as they are now: the store is written in the background.
    return new AgentRunList(
        page.agentRuns().stream()
            .map(
                a -> {
                  AgentRuns.Live l = mine(a.agentRunId());
                  return l == null ? a : l.run().info().withoutSteps();
                })
            .toList(),
        page.nextCursor());
  }

  @Override
  public AutoCloseable watch(String agentRunId, long afterSeq, Consumer<AgentEvent> sink) {
    Ids.requireAgentRunId(agentRunId);
    AgentRuns.Live l = mine(agentRunId);
    if (l != null) {
      return l.run().watch(afterSeq, sink);
    }
    AgentRunInfo info = stored(agentRunId);
    // Numbered as they were live: a code step that ran was three events (its run started, the
    // step began, the step ended), every other step one.
    long seq = 0;
    for (AgentStep s : info.steps()) {
      if (s.kind() == dev.pysandbox.api.agent.AgentStepKind.CODE && s.runId() != null) {
        if (++seq > afterSeq) {
          sink.accept(new AgentEvent(seq, "run", null, s.runId(), null, null));
        }
        if (++seq > afterSeq) {
          sink.accept(new AgentEvent(seq, "step", began(s), s.runId(), null, null));
        }
      }
      if (++seq > afterSeq) {
        sink.accept(new AgentEvent(seq, "step", s, s.runId(), null, null));
      }
    }
    if (info.answer() != null && ++seq > afterSeq) {
      sink.accept(new AgentEvent(seq, "answer", null, null, info.answer(), null));
    }
    if (info.status().finished() && ++seq > afterSeq) {
      sink.accept(new AgentEvent(seq, "done", null, null, null, info));
    }
    return () -> {};
  }

  /** A code step as it was when its run began. */
  private static AgentStep began(AgentStep s) {
    return StepBuilder.of(s.index(), s.kind())
        .code(s.code())
        .run(s.runId(), dev.pysandbox.api.RunStatus.RUNNING.wireName(), null)
        .timed(s.startedAt(), -1)
        .build();
  }

  private AgentRuns.Live mine(String agentRunId) {
    AgentRuns.Live l = runs.find(agentRunId);
    return l != null && l.tenant().equals(tenant) ? l : null;
  }

  private AgentRunInfo stored(String agentRunId) {
    return runs.store
        .get()
        .get(tenant, agentRunId)
        .orElseThrow(
            () ->
                new PysandboxException(
                    ErrorCode.NOT_FOUND, "no agent run " + agentRunId + " (agent_run_id)"));
  }
}
