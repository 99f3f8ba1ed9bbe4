package dev.pysandbox.core;

import dev.pysandbox.api.ApprovalDecision;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.environments.Environments;
import dev.pysandbox.util.TimeSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core as the faces see it: the view of the tenant {@code local} (stdio and the CLI; see {@link
 * TenantView}, which hands each call to the part whose job it is), the views of other tenants
 * ({@link #forTenant}), the server's own calls (every tenant's runs, sessions, approvals and
 * events, for the host's operator) and the server's life: start, drain, stop. See {@link
 * ServiceWiring} for the parts, and docs/DESIGN.md, "Core by role".
 *
 * <p>Start-up is cheap: the store is opened and migrated, runs and sandboxes left by dead servers
 * are cleaned up and the pool is filled in the background, so that an MCP client gets its tool list
 * at once; the first call waits for whatever it needs.
 */
public final class DefaultSandboxService extends TenantView implements OperatorService {
  private static final Logger log = LoggerFactory.getLogger(DefaultSandboxService.class);

  private final CoreLifecycle life;

  private DefaultSandboxService(ServiceWiring core) {
    super(core, Tenants.LOCAL);
    this.life = new CoreLifecycle(core);
  }

  /** The parts, for tests in this package. */
  public ServiceWiring core() {
    return core;
  }

  /**
   * Starts the core; returns at once while the store and the pool get ready behind it.
   *
   * @param parts the backend and the store, as the server's assembly ({@code dev.pysandbox.app})
   *     builds them
   */
  public static DefaultSandboxService start(PysandboxConfig config, CoreParts parts) {
    DefaultSandboxService s = create(config, TimeSource.system(), parts);
    s.startBackground();
    return s;
  }

  /**
   * Opens the core for a command that only reads and asks (history, sessions, doctor): it cleans up
   * after nobody — no orphan runs marked, no sandbox or cgroup of a dead server removed, no pool,
   * no timers — so that looking never changes what another server is doing.
   */
  public static DefaultSandboxService openReadOnly(PysandboxConfig config, CoreParts parts) {
    DefaultSandboxService s = build(config, TimeSource.system(), true, parts);
    s.startBackground();
    return s;
  }

  /**
   * Builds the core without starting its background work, so that a face can first get ready to
   * answer (an MCP client waits for its tool list) while nothing competes for the CPU; call {@link
   * #startBackground()} next. Calls that need the store or a sandbox wait for it.
   *
   * @param clock the time the core records and waits by: {@link TimeSource#system()}, or in tests a
   *     source they move on (a plain {@link Clock} gives its instants, real monotonic time)
   */
  public static DefaultSandboxService create(PysandboxConfig config, Clock clock, CoreParts parts) {
    return build(config, clock, false, parts);
  }

  private static DefaultSandboxService build(
      PysandboxConfig config, Clock clock, boolean readOnly, CoreParts parts) {
    for (String warning : config.warnings()) {
      log.warn("configuration: {}", warning);
    }
    if (!readOnly) {
      // At once, before anything is made: a store that cannot be written never comes right alone.
      parts.requireWritable(new DataLayout(config.dataDir()));
    }
    try {
      return new DefaultSandboxService(new ServiceWiring(config, clock, readOnly, parts));
    } catch (IOException | UncheckedIOException e) {
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE,
          "cannot use the data directory " + config.dataDir() + ": " + e.getMessage(),
          e);
    }
  }

  /** Opens the store, cleans up after dead servers and fills the warm pool, in the background. */
  public void startBackground() {
    life.startBackground();
  }

  /**
   * Shares {@code max_sessions} among the tenants {@code tenants} counts, when {@code
   * max_sessions_per_tenant} is not set: a server whose keyed HTTP face several tenants share gives
   * each {@code max(1, max_sessions / tenants)}, so one cannot take every session.
   */
  public void shareSessionsAmong(java.util.function.IntSupplier tenants) {
    core.sessions.shareAmong(tenants);
  }

  /**
   * The view of one tenant: what it owns, and nothing of any other tenant's. A view is cheap and
   * holds no state; the faces ask for one per call.
   *
   * @throws PysandboxException {@code invalid_argument} for a name that breaks {@link
   *     Ids#TENANT_REGEX}
   */
  @Override
  public SandboxService forTenant(String tenant) {
    return Tenants.LOCAL.equals(tenant) ? this : new TenantView(core, tenant);
  }

  // -- the tenant local (stdio and the CLI) ------------------------------------------------------

  /** Every tenant's pending approvals (for the host's operator: the command line). */
  public dev.pysandbox.api.ApprovalList allPendingApprovals() {
    return core.approvals.pending(null);
  }

  /** Every tenant's runs, each with its tenant (for the host's operator: the command line). */
  public RunPage allRuns(RunQuery query) {
    return core.store().list(null, query);
  }

  /**
   * The open sessions of every tenant, each with its tenant, as the servers sharing the data
   * directory last recorded them (for the host's operator).
   */
  public List<SessionInfo> allRecordedSessions() {
    return core.store().openSessions(null, core.instances::isAlive);
  }

  /** Every tenant's security events, each with its tenant (for the host's operator). */
  public dev.pysandbox.api.SecurityEventList allSecurityEvents(
      dev.pysandbox.api.SecurityEventQuery query) {
    return securityEvents(core, null, query);
  }

  /** Any tenant's approval, with its code (for the host's operator). */
  public dev.pysandbox.api.Approval anyApproval(String approvalId) {
    return core.approvals.show(null, approvalId);
  }

  /**
   * Decides any tenant's approval as the host's operator ({@code cli:<user>}); the server holding
   * the run starts it within a second.
   */
  public RunRecord decideAsOperator(String approvalId, boolean approve, String reason) {
    String operator = "cli:" + System.getProperty("user.name", "?");
    return core.approvedRuns.decide(
        null, approvalId, new ApprovalDecision(approve, operator, reason), "cli");
  }

  /** Every tenant's: this is the server's own view. */
  @Override
  public dev.pysandbox.api.SecurityEventCounts securityEventCounts() {
    return core.securityEvents.counts();
  }

  /** Every tenant's: this is the server's own view. */
  @Override
  public void recordMetrics(dev.pysandbox.api.MetricsRecorder recorder) {
    core.metrics.to(recorder);
  }

  /** Every tenant's: this is the server's own view. */
  @Override
  public dev.pysandbox.api.ServerLoad load() {
    return core.load();
  }

  /**
   * Builds (or finds) the environment for these packages now, telling {@code progress} each line
   * the build prints ({@code pysandbox envs build}).
   *
   * @throws PysandboxException {@code invalid_argument} for a bad spec, {@code environment_failed}
   *     naming what pip said
   */
  public dev.pysandbox.api.EnvironmentInfo buildEnvironment(
      List<String> packages, java.util.function.Consumer<String> progress) {
    List<dev.pysandbox.packages.Requirement> reqs =
        dev.pysandbox.packages.Requirements.parse(packages);
    if (reqs.isEmpty()) {
      throw PysandboxException.invalid("name at least one package");
    }
    core.requireBackend();
    Environments.Ready env = core.environments.ensure(reqs, Tenants.LOCAL, progress);
    return new dev.pysandbox.api.EnvironmentInfo(
        env.key(),
        env.requirements(),
        env.sizeBytes(),
        env.createdAt().toString(),
        core.environments.lastUsed(env).toString(),
        0,
        core.environments.inUse(env.key()),
        env.envHash(),
        env.pipFreeze());
  }

  /**
   * Recomputes the store's hash chain from the records and files as they are now (every tenant's:
   * for the command line, never a face).
   */
  public dev.pysandbox.api.VerifyReport verifyRecords() {
    return core.review.verify();
  }

  /** Closes sessions idle past their TTL (run every 30 s; tests call it with a moved clock). */
  List<dev.pysandbox.store.SessionKey> expireIdleSessions() {
    return core.expiry.expireIdle();
  }

  // -- files and context -------------------------------------------------------------------------

  // -- set-up and shutdown -----------------------------------------------------------------------

  /** Waits until start-up housekeeping (orphan cleanup, first pool fill) has run. */
  public void awaitStarted() {
    life.awaitStarted();
  }

  /**
   * Stops every run in flight: each is killed and recorded {@code interrupted} with {@code reason},
   * and answers its caller. Waits at most {@code timeoutMillis} for them to be recorded.
   */
  public void interruptRuns(String reason, long timeoutMillis) {
    core.inFlight.interruptAll(reason);
    List<String> left = core.inFlight.awaitIdle(timeoutMillis);
    if (!left.isEmpty()) {
      log.warn("runs still finishing after {} ms: {}", timeoutMillis, left);
    }
  }

  /**
   * A graceful stop's first half: no new run starts (each is refused with a retryable {@code
   * backend_unavailable}); runs in flight may finish within {@code graceMillis}; those still
   * running then are cancelled — their sandboxes killed, each recorded {@code cancelled} with
   * {@code reason}. Call {@link #close(String)} next.
   *
   * @return the ids of the runs cancelled
   */
  public List<String> drain(long graceMillis, String reason) {
    core.inFlight.refuseNew();
    List<String> left = core.inFlight.awaitIdle(graceMillis);
    if (left.isEmpty()) {
      return left;
    }
    log.info("cancelling {} run(s) still in flight after the grace period: {}", left.size(), left);
    core.inFlight.cancelAll(reason);
    List<String> stuck = core.inFlight.awaitIdle(5_000);
    if (!stuck.isEmpty()) {
      log.warn("runs still finishing after they were cancelled: {}", stuck);
    }
    return left;
  }

  @Override
  public void close() {
    close("the server stopped");
  }

  /**
   * Stops the server within about a second: runs in flight end {@code interrupted} with {@code
   * reason}, every sandbox is killed and reaped, this server's cgroups are removed, sessions are
   * recorded closed. Idempotent.
   */
  public void close(String reason) {
    life.close(reason);
  }
}
