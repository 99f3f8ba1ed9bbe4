package dev.pysandbox.backend;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * The SPI for a kind of sandbox (bubblewrap, a container engine, ...). A backend starts sandboxes,
 * each holding one runner that speaks the worker protocol, and kills them. It knows nothing of
 * sessions, runs or faces; the core knows backends only through this interface, and gets one from
 * {@link Backends}. What every backend must do is written down once, as a test suite that each
 * backend's test runs ({@code SandboxBackendContract}).
 *
 * <p>Set-up (finding the interpreter, preparing the host) happens at the first call of {@link
 * #unavailableReason()}, which may block; until then the facts it finds ({@link #interpreter()},
 * {@link #confinement()}, {@link #sandboxUsers()}) are empty. Implementations are thread-safe.
 */
public interface SandboxBackend extends AutoCloseable {
  /** Short name used in configuration, reports and run records, e.g. {@code bwrap}. */
  String name();

  /**
   * Why this backend cannot start sandboxes on this host, naming what is missing and how to install
   * it; empty when it can. The first call sets the backend up (and may block); later calls answer
   * the same at once.
   */
  Optional<String> unavailableReason();

  /**
   * Starts a sandbox and completes when its runner is ready for requests.
   *
   * @return completes exceptionally with {@link dev.pysandbox.api.PysandboxException} ({@code
   *     backend_unavailable}) carrying what the sandbox printed when it fails to start
   */
  CompletableFuture<Sandbox> start(SandboxSpec spec);

  /**
   * The Python interpreter that sandboxes run (its version and the data-science packages it has),
   * as probed at set-up; empty before set-up or when set-up failed.
   */
  Optional<InterpreterInfo> interpreter();

  /**
   * How sandboxes are bounded on this host, for {@code check_setup} and {@code doctor}: one entry
   * per mechanism (for bwrap: {@code cgroups}, {@code seccomp}, {@code rlimits}, {@code
   * disk_quota}, {@code host_users}), each value a short sentence saying whether and how it
   * applies. Empty before set-up.
   */
  default Optional<Map<String, Object>> confinement() {
    return Optional.empty();
  }

  /**
   * Who sandboxes run as on the host, in a sentence (a uid of their own each, one shared user, a
   * container's user); empty before set-up.
   */
  default Optional<String> sandboxUsers() {
    return Optional.empty();
  }

  /**
   * What works on this host but less well than it should, each with the fix, for the problems of
   * {@code check_setup} (an unavailable backend says why in {@link #unavailableReason()}, not
   * here). Empty when nothing is amiss; what only set-up finds is missing before it.
   */
  default List<String> setupProblems() {
    return List.of();
  }

  /**
   * Every backend that was tried to get this one, in order, with why each could not be used; the
   * last is this one (or, when none worked, the last that failed). A backend that was named
   * directly reports itself alone.
   */
  default List<BackendAttempt> attempts() {
    return List.of(new BackendAttempt(name(), unavailableReason().orElse(null)));
  }

  /**
   * Kills the sandboxes that server processes of this data directory now dead left behind, and
   * releases what the backend held for them (control groups, file systems, host users), never
   * touching a sandbox of a live server. Their workspace directories are the caller's to delete
   * (their names are sandbox ids: see {@link SandboxIds#instanceOf}). Called once at start-up,
   * after set-up succeeded; blocking.
   *
   * @param instanceAlive tells whether a server instance id belongs to a live server
   * @return how many sandboxes' processes (or containers) were killed
   */
  int reapOrphans(Predicate<String> instanceAlive);

  /**
   * Runs {@code action} whenever the backend loses every sandbox it started at once, without being
   * asked (for bwrap: its launcher helper died), once their exits have completed and it can start
   * sandboxes again: whoever keeps sandboxes ready starts new ones at once. A backend whose
   * sandboxes can only die one by one never runs it. Replaces any earlier action.
   */
  default void onSandboxesLost(Runnable action) {}

  /**
   * The server is stopping: sandboxes that end from now on leave their resources for {@link
   * #close()} to release all at once, instead of one by one as each ends.
   */
  default void stopping() {}

  /** Kills every sandbox this backend started and releases its resources. */
  @Override
  void close();
}
