package dev.pysandbox.core.agents;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentService;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.config.AgentConfig;
import dev.pysandbox.store.AgentRunStore;
import dev.pysandbox.util.TimeSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's agent runs: the live ones (each on a thread of its own, under the caps
 * agent_max_concurrent and agent_max_concurrent_per_tenant), the model the settings name (made on
 * first use), and their end when the server stops (recorded interrupted).
 */
public final class AgentRuns implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AgentRuns.class);

  final AgentConfig config;
  final TimeSource time;
  final AgentRecorder recorder;
  final Supplier<AgentRunStore> store;
  final Supplier<String> interpreter;
  final int runTimeoutSeconds;
  final String instanceId;
  final Map<String, Live> live = new ConcurrentHashMap<>();

  /**
   * The last {@link #RECENT} agent runs that ended here, kept so that a follower that resumes their
   * events gets them numbered as they were live (the store keeps the steps, not the events).
   */
  private final Map<String, Live> recent =
      java.util.Collections.synchronizedMap(
          new java.util.LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Live> eldest) {
              return size() > RECENT;
            }
          });

  static final int RECENT = 256;
  private final Supplier<ModelClient> serverModel;
  private final ExecutorService threads;
  final ScheduledExecutorService watchdog;
  private volatile ModelClient model;
  private volatile boolean closed;

  /** A live agent run, its ledger and its tenant. */
  record Live(String tenant, LiveAgentRun run, AgentLedger ledger, SandboxService service) {}

  /**
   * @param serverModel the provider the settings name (called once, on the first agent run that
   *     needs it); null for agent_provider sampling
   * @param interpreter the sandboxes' Python version, for the model's system message
   * @param runTimeoutSeconds a code run's timeout (the server's default; less when the time budget
   *     has less left)
   */
  public AgentRuns(
      AgentConfig config,
      TimeSource time,
      Supplier<AgentRunStore> store,
      dev.pysandbox.core.trajectories.TrajectoryLog trajectory,
      dev.pysandbox.core.audit.SecurityEventLog events,
      java.nio.file.Path agentRunsDir,
      String instanceId,
      Supplier<ModelClient> serverModel,
      Supplier<String> interpreter,
      int runTimeoutSeconds) {
    this.config = config;
    this.time = time;
    this.store = store;
    this.instanceId = instanceId;
    this.serverModel = serverModel;
    this.interpreter = interpreter;
    this.runTimeoutSeconds = runTimeoutSeconds;
    this.threads = Executors.newCachedThreadPool(named("pysandbox-agent-"));
    this.watchdog = Executors.newSingleThreadScheduledExecutor(named("pysandbox-agent-time-"));
    this.recorder =
        new AgentRecorder(store, trajectory, events, agentRunsDir, instanceId, this.threads);
  }

  /** The agent runs of {@code tenant}, acting through {@code service} (that tenant's view). */
  public AgentService forTenant(String tenant, SandboxService service) {
    return new TenantAgents(this, tenant, service);
  }

  /** The model of a new agent run: the caller's (sampling) or the server's provider. */
  ModelClient modelFor(ModelClient clientModel) {
    if ("sampling".equals(config.provider())) {
      if (clientModel == null) {
        throw PysandboxException.invalid(
            "this server's agent_provider is sampling (the MCP client's own model), and this"
                + " caller cannot be asked: connect with an MCP client that declares the sampling"
                + " capability, or set agent_provider to openai, anthropic or ollama (with"
                + " agent_base_url, agent_model and PYSANDBOX_AGENT_API_KEY or"
                + " agent_api_key_file)");
      }
      return clientModel;
    }
    ModelClient m = model;
    if (m == null) {
      synchronized (this) {
        if (model == null) {
          model = serverModel.get();
        }
        m = model;
      }
    }
    if (m == null) {
      throw PysandboxException.invalid(
          "agent_provider " + config.provider() + " is not available on this server");
    }
    return m;
  }

  /** Takes a place under the caps, or refuses with rate_limited. */
  synchronized void admit(String tenant, Live run) {
    if (closed) {
      throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, "the server is stopping");
    }
    long mine = live.values().stream().filter(l -> l.tenant().equals(tenant)).count();
    if (live.size() >= config.maxConcurrent() || mine >= config.maxConcurrentPerTenant()) {
      throw new PysandboxException(
          ErrorCode.RATE_LIMITED,
          (live.size() >= config.maxConcurrent()
                  ? "this server runs " + live.size() + " agent runs at once (agent_max_concurrent)"
                  : "you have " + mine + " agent runs running (agent_max_concurrent_per_tenant)")
              + ": wait for one to end or cancel one, then try again");
    }
    live.put(run.run().id(), run);
  }

  void start(Live run, AgentLoop loop) {
    watchdog.schedule(
        () -> {
          if (!run.ledger().ended() && run.ledger().timeExhausted()) {
            stopInFlight(run);
          }
        },
        run.run().info().budgets().timeBudgetSeconds() * 1000L + 50,
        TimeUnit.MILLISECONDS);
    threads.execute(loop);
  }

  /** Stops what a run that has ended has in flight: the model call, the code run. */
  void stopInFlight(Live run) {
    String codeRun = run.run().cancel();
    if (codeRun != null) {
      try {
        run.service().cancelRun(codeRun, "its agent run " + run.run().id() + " ended");
      } catch (RuntimeException e) {
        log.debug("agent run {}: cancelling run {}: {}", run.run().id(), codeRun, e.toString());
      }
    }
  }

  void ended(String agentRunId) {
    Live l = live.remove(agentRunId);
    if (l != null) {
      recent.put(agentRunId, l);
    }
  }

  /** Drops an agent run that never started (its record could not be written). */
  void forget(String agentRunId) {
    live.remove(agentRunId);
  }

  /** A live agent run, or one that ended here lately; null otherwise. */
  Live find(String agentRunId) {
    Live l = live.get(agentRunId);
    return l != null ? l : recent.get(agentRunId);
  }

  /** Agent runs live now (metrics, tests). */
  public int liveCount() {
    return live.size();
  }

  /** Ends every live agent run as interrupted (the server stops) and records it so. */
  public void close(String reason) {
    closed = true;
    for (Live l : List.copyOf(live.values())) {
      if (l.ledger().stop(AgentRunStatus.INTERRUPTED, "interrupted: " + reason)) {
        stopInFlight(l);
      }
    }
    recorder.close(2_000);
    try {
      List<String> left = store.get().interruptAll(instanceId, "interrupted: " + reason);
      if (!left.isEmpty()) {
        log.info("agent runs recorded interrupted: {}", left);
      }
    } catch (RuntimeException e) {
      log.warn("could not record the agent runs in flight as interrupted: {}", e.toString());
    }
    watchdog.shutdownNow();
    threads.shutdownNow();
  }

  @Override
  public void close() {
    close("the server stopped");
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
