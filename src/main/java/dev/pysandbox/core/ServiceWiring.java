package dev.pysandbox.core;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.Backends;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.store.StoreFactory;
import dev.pysandbox.util.Futures;
import dev.pysandbox.util.TimeSource;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's parts, built in dependency order, started in the background (store, clean-up after
 * dead servers, first pool fill, periodic jobs) and stopped in reverse order. Which parts exist and
 * what starts is decided here and nowhere else.
 */
final class ServiceWiring {
  private static final Logger log = LoggerFactory.getLogger(ServiceWiring.class);

  /** How long closing waits for runs in flight to record that they were interrupted. */
  private static final long CLOSE_RUNS_WAIT_MILLIS = 600;

  /**
   * How long a stop may spend deleting its workspaces' directories (empty mount points as root, in
   * a blink); what is left then, the next server on this data directory deletes.
   */
  private static final long SWEEP_MILLIS = 300;

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
  final LiveRuns live;
  final AuditTrail audit;
  final AuditReview review;
  final SecurityEventLog securityEvents;
  final CodeAnalysis analysis;
  final Approvals approvals;
  final RunExecutor runs;
  final StartedRuns started;
  final SessionCloser closer;
  final Uploads uploads;
  final Artifacts artifacts;
  final ContextCalls context;
  final TrajectoryLog trajectory;
  final EgressWays egress;
  final Environments environments;
  final SpareSandboxes spares;
  final Downloads downloads;
  private final DeadServerCleanup cleanup;
  private final boolean readOnly;
  private final CompletableFuture<Void> housekeeping = new CompletableFuture<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private boolean backgroundStarted;

  ServiceWiring(PysandboxConfig config, Clock clock, boolean readOnly) throws IOException {
    this.config = config;
    this.layout = new DataLayout(config.dataDir());
    this.time = TimeSource.of(clock);
    this.readOnly = readOnly;
    Files.createDirectories(config.dataDir());
    restrict(config.dataDir());
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
      this.backend = Backends.inspect(config, layout);
    } else {
      this.hub = WorkerHub.open(HubSockets.of(layout, instances.id()));
      this.backend = Backends.select(config, layout, hub, instances.id(), pools.blocking);
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
    this.runs =
        new RunExecutor(
            layout,
            time,
            instances.id(),
            backend.name(),
            this::store,
            pools.blocking,
            config.cancelGraceSeconds(),
            config.outputMaxBytes(),
            config.outputsMaxBytes(),
            new CollectBudget.Bounds(
                config.collectMaxSeconds(),
                config.collectHashMaxBytes(),
                config.keptFilesMaxBytes()),
            new TenantStorage(config.tenantStorageMaxBytes(), tenant -> store().keptBytes(tenant)),
            live,
            () -> Provenance.of(backend.interpreter()),
            this::runEnded,
            securityEvents);
    this.started = new StartedRuns(pools.blocking, runs);
    this.approvals =
        new Approvals(
            config,
            this::store,
            time,
            analysis,
            securityEvents,
            instances.id(),
            instances::isAlive,
            pools.blocking,
            backend.name(),
            () -> Provenance.of(backend.interpreter()),
            this::runEnded);
    approvals.runWith((tenant, stored, l) -> new TenantView(this, tenant).runApproved(stored, l));
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
            this::storedRun,
            budgets,
            new KeptBlobs(layout, this::store));
    this.context = new ContextCalls(sessions, steps);
    this.trajectory = new TrajectoryLog(layout, time, !readOnly);
    this.egress = new EgressWays(config, securityEvents, instances.id());
    this.environments =
        new Environments(
            config, layout, backend, backend::interpreter, egress::forBuild, time, metrics);
    this.spares = new SpareSandboxes(pool::start, pools.blocking, pools.timer, time, metrics);
    this.downloads =
        new Downloads(
            layout,
            Math.min(config.downloadMaxBytes(), config.uploadMaxBytes()),
            egress,
            sessions,
            uploads,
            config.tiers().defaultTier());
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
        runs.inFlight(),
        runs.waitingForSandbox(),
        audit.queued());
  }

  /**
   * The environments the tenant's runs and sessions used ({@code null}: every one on disk, for
   * stdio and the CLI).
   */
  dev.pysandbox.api.EnvironmentList environmentList(String tenant) {
    java.util.Map<String, dev.pysandbox.store.EnvironmentUse> use = new java.util.HashMap<>();
    for (dev.pysandbox.store.EnvironmentUse u : store().environmentUse(tenant)) {
      use.put(u.key(), u);
    }
    java.util.List<dev.pysandbox.api.EnvironmentInfo> out = new java.util.ArrayList<>();
    long total = 0;
    for (Environments.Ready env : visibleEnvironments(tenant, use)) {
      dev.pysandbox.store.EnvironmentUse u = use.get(env.key());
      java.time.Instant last = environments.lastUsed(env);
      if (u != null && u.lastUsedAt().isAfter(last)) {
        last = u.lastUsedAt();
      }
      out.add(
          new dev.pysandbox.api.EnvironmentInfo(
              env.key(),
              env.requirements(),
              env.sizeBytes(),
              env.createdAt().toString(),
              last.toString(),
              u == null ? 0 : u.runs(),
              environments.inUse(
                  env.key(),
                  spares.count(
                      spec ->
                          spec.environment() != null
                              && spec.environment().key().equals(env.key()))),
              env.envHash(),
              env.pipFreeze()));
      total += env.sizeBytes();
    }
    return new dev.pysandbox.api.EnvironmentList(out, total);
  }

  private java.util.List<Environments.Ready> visibleEnvironments(
      String tenant, java.util.Map<String, dev.pysandbox.store.EnvironmentUse> use) {
    return environments.all().stream()
        .filter(e -> tenant == null || use.containsKey(e.key()))
        .toList();
  }

  /** Removes the tenant's environments (every one with {@code null}) unused for that long. */
  dev.pysandbox.api.EnvironmentCleanResult cleanEnvironments(
      String tenant, int olderThanDays, boolean dryRun) {
    java.util.Map<String, dev.pysandbox.store.EnvironmentUse> use = new java.util.HashMap<>();
    for (dev.pysandbox.store.EnvironmentUse u : store().environmentUse(tenant)) {
      use.put(u.key(), u);
    }
    java.util.List<Environments.Ready> candidates = visibleEnvironments(tenant, use);
    java.util.Set<String> keys = new java.util.HashSet<>();
    candidates.forEach(e -> keys.add(e.key()));
    // A spare sandbox (started ahead of the next one-shot run) is no use of its environment.
    spares.drop(spec -> spec.environment() != null && keys.contains(spec.environment().key()));
    java.util.Map<String, Long> removed = environments.clean(candidates, olderThanDays, dryRun);
    java.time.Instant cutoff = time.instant().minus(java.time.Duration.ofDays(olderThanDays));
    java.util.List<String> kept =
        candidates.stream()
            .filter(e -> !removed.containsKey(e.key()))
            .filter(e -> !environments.lastUsed(e).isAfter(cutoff))
            .map(Environments.Ready::key)
            .toList();
    long freed = removed.values().stream().mapToLong(Long::longValue).sum();
    return new dev.pysandbox.api.EnvironmentCleanResult(
        dryRun, java.util.List.copyOf(removed.keySet()), freed, kept);
  }

  /** Opens the store and, unless read-only, cleans up and fills the pool; in the background. */
  synchronized void startBackground() {
    if (backgroundStarted) {
      return;
    }
    backgroundStarted = true;
    store.open();
    if (readOnly) {
      housekeeping.complete(null);
      return;
    }
    audit.start(pools.timer);
    trajectory.start(pools.timer, pools.blocking, config.trajectoryRetentionDays());
    CompletableFuture.runAsync(this::startBackend, pools.blocking)
        .whenComplete((v, e) -> complete(housekeeping, v, e));
    pools.timer.scheduleWithFixedDelay(this::expireSafely, 30, 30, TimeUnit.SECONDS);
    pools.timer.scheduleWithFixedDelay(closer::serveRequests, 1, 1, TimeUnit.SECONDS);
    pools.timer.scheduleWithFixedDelay(this::retryDeferredSafely, 1, 1, TimeUnit.SECONDS);
    pools.timer.scheduleWithFixedDelay(
        () -> pools.blocking.execute(approvals::tick), 1, 1, TimeUnit.SECONDS);
  }

  /** Waits until start-up housekeeping (orphan cleanup, first pool fill) has run. */
  void awaitStarted() {
    housekeeping.join();
    store();
  }

  private static <T> void complete(CompletableFuture<T> f, T value, Throwable error) {
    if (error != null) {
      f.completeExceptionally(Futures.unwrap(error));
    } else {
      f.complete(value);
    }
  }

  private RunStore openStore() {
    RunStore s = StoreFactory.openRunStore(layout, time, readOnly);
    if (readOnly) {
      return s;
    }
    s = cleanup.recordLost(s);
    new BlobMigration(layout, s).run(); // before any run or reader: old runs' files moved
    return s;
  }

  private void startBackend() {
    cleanup.removeDeadSockets();
    try {
      NativeFs.require();
    } catch (PysandboxException e) {
      log.error("{}: workspaces cannot be read, so runs will fail", e.getMessage());
    }
    if (backend.unavailableReason().isPresent()) {
      log.warn("sandbox backend unavailable: {}", backend.unavailableReason().get());
      return;
    }
    cleanup.reapSandboxes(backend);
    pool.refill();
  }

  private void retryDeferredSafely() {
    try {
      runs.retryDeferred();
    } catch (RuntimeException e) {
      log.warn("writing deferred run results failed: {}", e.getMessage());
    }
  }

  private void expireSafely() {
    try {
      List<SessionKey> expired = sessions.expireIdle();
      if (!expired.isEmpty()) {
        log.info("closed idle sessions: {}", expired);
      }
    } catch (RuntimeException e) {
      log.warn("session expiry failed", e);
    }
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
    backend
        .unavailableReason()
        .ifPresent(
            why -> {
              throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, why);
            });
  }

  /** The store, waiting while it opens; {@code store_unavailable} when it cannot be. */
  RunStore store() {
    return store.get();
  }

  /**
   * A tenant's stored run, without its code, with the command that shows it; {@code not_found} if
   * the tenant has none with this id (another tenant's run answers exactly the same).
   */
  dev.pysandbox.api.RunRecord storedRun(String tenant, String runId) {
    return storedRun(tenant, runId, false);
  }

  dev.pysandbox.api.RunRecord storedRun(String tenant, String runId, boolean includeCode) {
    Ids.requireRunId(runId);
    return store()
        .get(runId, includeCode)
        .filter(r -> tenant.equals(r.tenant()))
        .map(r -> r.toBuilder().viewCommand(RunExecutor.viewCommand(r.runId())).build())
        .orElseThrow(
            () -> new PysandboxException(ErrorCode.NOT_FOUND, "no run with id '" + runId + "'"));
  }

  /**
   * Stops within about a second: runs in flight end {@code interrupted} with {@code reason}, every
   * sandbox is killed and reaped, this server's cgroups are removed, sessions are recorded closed.
   * Idempotent.
   */
  void close(String reason) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    pools.timer.shutdownNow();
    backend.stopping();
    runs.interruptAll(reason);
    sessions.closeAll(reason);
    spares.close();
    pool.close();
    analysis.close();
    environments.close();
    runs.awaitIdle(CLOSE_RUNS_WAIT_MILLIS);
    journal.close(300);
    backend.close();
    egress.close();
    if (hub != null) {
      hub.close();
      cleanup.removeOwnWorkspaces(SWEEP_MILLIS);
    }
    retryDeferredSafely();
    audit.close();
    securityEvents.close();
    store
        .ifOpen()
        .ifPresent(
            s -> {
              try {
                // Whatever did not get to record its end in time is recorded interrupted now.
                s.interruptOrphans(instance -> !instance.equals(instances.id()));
                s.seal(Integer.MAX_VALUE);
              } catch (RuntimeException e) {
                log.warn("could not record the runs in flight as interrupted: {}", e.getMessage());
              }
              s.close();
            });
    trajectory.close();
    pools.stopBlocking(200);
    instances.close();
  }

  /** Makes the data directory private to its owner, as every process that opens it does. */
  static void restrict(Path dir) {
    try {
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    } catch (IOException | UnsupportedOperationException e) {
      log.debug("could not set permissions of {}", dir, e);
    }
  }
}
