package dev.pysandbox.core;

import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.analysis.CodeAnalysis;
import dev.pysandbox.core.approvals.ApprovalPolicy;
import dev.pysandbox.core.approvals.Approvals;
import dev.pysandbox.core.audit.AuditReview;
import dev.pysandbox.core.audit.AuditTrail;
import dev.pysandbox.core.audit.Provenance;
import dev.pysandbox.core.audit.SecurityEventLog;
import dev.pysandbox.core.blobs.BlobMigration;
import dev.pysandbox.core.blobs.KeptBlobs;
import dev.pysandbox.core.blobs.TenantStorage;
import dev.pysandbox.core.environments.EnvironmentListing;
import dev.pysandbox.core.environments.Environments;
import dev.pysandbox.core.environments.RunEnvironments;
import dev.pysandbox.core.events.EventSpill;
import dev.pysandbox.core.events.LiveRuns;
import dev.pysandbox.core.files.CollectBudget;
import dev.pysandbox.core.files.NativeFs;
import dev.pysandbox.core.host.CorePools;
import dev.pysandbox.core.host.DeadServerCleanup;
import dev.pysandbox.core.host.HubSockets;
import dev.pysandbox.core.host.InstanceRegistry;
import dev.pysandbox.core.host.StoreHandle;
import dev.pysandbox.core.network.EgressWays;
import dev.pysandbox.core.requests.RequestValidator;
import dev.pysandbox.core.runs.ApprovedRuns;
import dev.pysandbox.core.runs.FileCollection;
import dev.pysandbox.core.runs.InFlightRuns;
import dev.pysandbox.core.runs.OneShotRun;
import dev.pysandbox.core.runs.RunExecutor;
import dev.pysandbox.core.runs.Runs;
import dev.pysandbox.core.runs.SessionOpener;
import dev.pysandbox.core.runs.SessionRun;
import dev.pysandbox.core.runs.StartedRuns;
import dev.pysandbox.core.runs.StoredRuns;
import dev.pysandbox.core.sandboxes.BackendGate;
import dev.pysandbox.core.sandboxes.SandboxSpecs;
import dev.pysandbox.core.sandboxes.SpareSandboxes;
import dev.pysandbox.core.sandboxes.WarmPool;
import dev.pysandbox.core.sandboxes.WorkspaceDisposal;
import dev.pysandbox.core.sessions.ContextCalls;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.core.sessions.SessionCloser;
import dev.pysandbox.core.sessions.SessionEnds;
import dev.pysandbox.core.sessions.SessionExpiry;
import dev.pysandbox.core.sessions.SessionJournal;
import dev.pysandbox.core.sessions.SessionManager;
import dev.pysandbox.core.sessions.SessionSteps;
import dev.pysandbox.core.trajectories.TrajectoryLog;
import dev.pysandbox.core.workspace.Artifacts;
import dev.pysandbox.core.workspace.Downloads;
import dev.pysandbox.core.workspace.Uploads;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.TimeSource;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's parts, built in dependency order: which parts exist, and what a read-only core leaves
 * out, is decided here and nowhere else ({@link CoreLifecycle} starts and stops them).
 */
public final class ServiceWiring {
  private static final Logger log = LoggerFactory.getLogger(ServiceWiring.class);

  final PysandboxConfig config;
  final DataLayout layout;

  /** The one time source of this core: instants recorded, deadlines and polls waited out. */
  final TimeSource time;

  final InstanceRegistry instances;

  /** Null when read-only. */
  final WorkerHub hub;

  final CorePools pools;

  /** Where the parts tell what they do, for the metrics of whichever face records them. */
  final MetricsRelay metrics = new MetricsRelay();

  final StoreHandle store;
  final SandboxBackend backend;
  final SandboxSpecs specs;
  final WarmPool pool;
  final RequestValidator validator;
  final SessionJournal journal;
  final SessionEnds ends;
  final SessionManager sessions;
  final SessionExpiry expiry;
  public final LiveRuns live;
  final AuditTrail audit;
  final AuditReview review;
  final SecurityEventLog securityEvents;
  final CodeAnalysis analysis;
  final Approvals approvals;
  final InFlightRuns inFlight;
  final StoredRuns storedRuns;
  final SessionOpener opener;

  /** The run path: every run, new or approved, from its request to its record. */
  final Runs runs;

  final ApprovedRuns approvedRuns;
  final SessionCloser closer;
  final Uploads uploads;
  final Artifacts artifacts;
  final ContextCalls context;
  final TrajectoryLog trajectory;
  final EgressWays egress;
  final Environments environments;
  final SpareSandboxes spares;
  final Downloads downloads;
  final EnvironmentListing environmentListing;
  final RunExecutor executor;
  final DeadServerCleanup cleanup;
  final dev.pysandbox.core.agents.AgentRuns agents;
  final boolean readOnly;

  /** The backend and the store, built where the server is assembled. */
  private final CoreParts parts;

  ServiceWiring(PysandboxConfig config, Clock clock, boolean readOnly, CoreParts parts)
      throws IOException {
    this.config = config;
    this.parts = parts;
    this.layout = new DataLayout(config.dataDir());
    this.time = TimeSource.of(clock);
    this.readOnly = readOnly;
    Files.createDirectories(config.dataDir());
    layout.restrictDataDir();
    if (!readOnly) {
      try {
        Files.createDirectories(layout.logsDir());
      } catch (IOException e) {
        log.warn("no {} for the JVM's crash reports: {}", layout.logsDir(), e.toString());
      }
    }
    NativeFs.useDirectory(layout.nativeDir());
    this.instances = new InstanceRegistry(layout.instancesDir());
    this.cleanup =
        new DeadServerCleanup(
            layout, instances, config.keepWorkspaces(), config.outputLimitBytes());
    this.pools = new CorePools();
    this.store = new StoreHandle(this::openStore, pools.blocking, time);
    if (readOnly) {
      // Looking needs no sandbox: no hub socket, no launcher, no seccomp filter, no cgroup.
      this.hub = null;
      this.backend = parts.inspectBackend(config, layout);
    } else {
      this.hub = WorkerHub.open(HubSockets.of(layout, instances.id()), pools.blocking);
      this.backend = parts.backend(config, layout, hub, instances.id(), pools.blocking);
    }
    this.specs = new SandboxSpecs(config);
    this.pool =
        new WarmPool(
            backend,
            specs.pooled(),
            config.poolSize(),
            config.startupTimeoutSeconds(),
            pools.timer,
            time,
            metrics);
    backend.onSandboxesLost(pool::refillNow);
    this.validator = new RequestValidator(config);
    this.journal = new SessionJournal(this::store, instances.id(), pools.timer, time);
    this.ends =
        new SessionEnds(this::store, time, config.sessionRetentionMinutes(), instances.id());
    this.sessions =
        new SessionManager(
            config,
            time,
            pool,
            specs,
            pools.blocking,
            (s, sandbox) -> WorkspaceDisposal.afterSessionClosed(sandbox, config.keepWorkspaces()),
            journal::record,
            (s, reusableBefore) ->
                store()
                    .claimSession(
                        s.tenant, s.info(), instances.id(), instances::isAlive, reusableBefore),
            this::sandboxDied,
            ends);
    this.expiry = new SessionExpiry(sessions, time);
    this.storedRuns = new StoredRuns(this::store);
    this.live =
        new LiveRuns(
            pools.timer,
            pools.blocking,
            time::nanoTime,
            id -> store().get(id, false),
            id -> EventSpill.fileOf(layout.runFiles(id)),
            !readOnly);
    this.securityEvents =
        new SecurityEventLog(this::store, time, pools.blocking, pools.timer, !readOnly);
    this.analysis =
        new CodeAnalysis(
            backend, CodeAnalysis.spec(config), config.startupTimeoutSeconds(), pools.blocking);
    this.audit = new AuditTrail(layout, this::store, config.notebooks());
    this.review = new AuditReview(layout, this::store, time, audit);
    this.inFlight =
        new InFlightRuns(time, this::store, config.cancelGraceSeconds(), live, sessions);
    this.executor =
        new RunExecutor(
            time,
            instances.id(),
            backend.name(),
            this::store,
            pools.blocking,
            config.cancelGraceSeconds(),
            config.outputMaxBytes(),
            config.outputsMaxBytes(),
            inFlight,
            () -> Provenance.of(backend.interpreter()),
            this::runEnded,
            securityEvents);
    StartedRuns started = new StartedRuns(pools.blocking, inFlight);
    this.approvals =
        new Approvals(
            config,
            this::store,
            time,
            securityEvents,
            instances.id(),
            instances::isAlive,
            backend.name(),
            () -> Provenance.of(backend.interpreter()),
            this::runEnded);
    this.closer = new SessionCloser(sessions, store, instances.id(), time, instances::isAlive);
    SessionSteps steps = new SessionSteps(this::store, time);
    CollectBudget.Bounds collect =
        new CollectBudget.Bounds(
            config.collectMaxSeconds(), config.collectHashMaxBytes(), config.keptFilesMaxBytes());
    java.util.function.Supplier<CollectBudget> budgets =
        () -> CollectBudget.start(time, collect, () -> false);
    this.uploads =
        new Uploads(
            config.uploadMaxBytes(),
            sessions,
            this::requireBackend,
            steps,
            layout.imagesDir(),
            budgets);
    this.artifacts =
        new Artifacts(
            layout,
            config.readMaxBytes(),
            sessions,
            storedRuns::get,
            budgets,
            new KeptBlobs(layout, this::store));
    this.context = new ContextCalls(sessions, steps);
    this.trajectory = new TrajectoryLog(layout, time, !readOnly);
    this.egress = new EgressWays(config, securityEvents, instances.id(), parts::egress);
    this.environments =
        new Environments(
            config, layout, backend, backend::interpreter, egress::forBuild, time, metrics);
    this.spares = new SpareSandboxes(pool::start, pools.blocking, pools.timer, time, metrics);
    this.environmentListing = new EnvironmentListing(this::store, environments, spares, time);
    this.downloads =
        new Downloads(
            layout,
            Math.min(config.downloadMaxBytes(), config.uploadMaxBytes()),
            egress,
            sessions,
            uploads,
            config.tiers().defaultTier());
    RunEnvironments runEnvironments = new RunEnvironments(environments);
    this.opener =
        new SessionOpener(
            config, sessions, ends, validator, runEnvironments, environments, egress, backend);
    FileCollection files =
        new FileCollection(
            layout,
            time,
            pools.blocking,
            collect,
            new TenantStorage(config.tenantStorageMaxBytes(), t -> store().keptBytes(t)),
            new KeptBlobs(layout, this::store));
    this.runs =
        new Runs(
            validator,
            backend,
            new ApprovalPolicy(config, analysis),
            approvals,
            opener,
            storedRuns,
            started,
            inFlight,
            new OneShotRun(executor, runEnvironments, specs, egress, spares, pool, files),
            new SessionRun(executor, opener, sessions, files, time),
            this::store,
            time,
            audit);
    this.approvedRuns = new ApprovedRuns(approvals, runs, instances.id(), pools.blocking);
    this.agents =
        new dev.pysandbox.core.agents.AgentRuns(
            config.agent(),
            time,
            () -> store().agentRuns(),
            trajectory,
            securityEvents,
            layout.agentRunsDir(),
            instances.id(),
            () -> parts.model(config),
            () -> backend.interpreter().map(i -> i.version()).orElse(null),
            config.timeoutDefaultSeconds());
  }

  /** A run's final state is recorded: its notebooks are written soon, and it is counted. */
  private void runEnded(dev.pysandbox.api.RunRecord r) {
    audit.finished(r.runId());
    metrics.runEnded(r.status(), r.tier(), r.durationMs());
  }

  /** What this server holds now, for the gauges of its metrics. */
  dev.pysandbox.api.ServerLoad load() {
    return new dev.pysandbox.api.ServerLoad(
        sessions.size(),
        pool.size(),
        pool.readyCount(),
        inFlight.count(),
        inFlight.waitingForSandbox(),
        audit.queued());
  }

  private RunStore openStore() {
    RunStore s = parts.openRunStore(layout, time, readOnly);
    if (readOnly) {
      return s;
    }
    s = cleanup.recordLost(s);
    new BlobMigration(layout, s).run(); // before any run or reader: old runs' files moved
    return s;
  }

  /** An idle session's sandbox died on its own: a security event of the session's tenant. */
  private void sandboxDied(Session s, String reason) {
    securityEvents.record(
        s.tenant,
        dev.pysandbox.api.SecurityEvent.Kind.SANDBOX_DIED,
        s.id,
        null,
        java.util.Map.of("reason", reason));
  }

  /** Throws {@code backend_unavailable} with the reason when no sandbox can be started. */
  void requireBackend() {
    BackendGate.require(backend);
  }

  /** The store, waiting while it opens; {@code store_unavailable} when it cannot be. */
  RunStore store() {
    return store.get();
  }
}
