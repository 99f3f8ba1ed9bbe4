package dev.pysandbox.http;

import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventCounts;
import dev.pysandbox.api.ServerLoad;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * What {@code GET /metrics} shows, in Prometheus text: HTTP requests by method, route (the route's
 * template, {@code /api/v1/runs/{run_id}}, or the servlet mapping, so that paths cannot multiply
 * series) and status, with their latency; requests in flight; what the core tells as it happens
 * ({@link MetricsRecorder}: runs by status and tier with a duration histogram, sandbox starts and
 * failures, waits for a sandbox, environment builds); what the server holds ({@link ServerLoad}:
 * sessions, the warm pool, runs in flight and waiting); security events by kind; the JVM's memory,
 * threads, CPU and uptime.
 *
 * <p>Micrometer holds a gauge's or a function counter's state object weakly: every one here is
 * registered on this object or with a strong reference, never on a lambda made for it (which the
 * collector took, leaving the gauge {@code NaN}).
 */
final class HttpMetrics implements MetricsRecorder {
  private static final Duration[] RUN_BUCKETS = seconds(0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800);
  private static final Duration[] WAIT_BUCKETS = seconds(0.001, 0.01, 0.1, 0.5, 1, 5, 30, 120);
  private static final Duration[] BUILD_BUCKETS = seconds(1, 10, 30, 60, 300, 900);

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Supplier<ServerLoad> load;
  private final Supplier<SecurityEventCounts> securityEvents;

  /**
   * @param load what the server holds now; called at each scrape, once per gauge
   * @param securityEvents the security events counted so far; called at each scrape
   */
  HttpMetrics(
      InFlight inFlight, Supplier<ServerLoad> load, Supplier<SecurityEventCounts> securityEvents) {
    this.load = load;
    this.securityEvents = securityEvents;
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    Gauge.builder("http.server.requests.active", inFlight, InFlight::count)
        .description("HTTP requests being answered (streams that only listen are not counted)")
        .strongReference(true)
        .register(registry);
    gauge(
        "pysandbox.sessions.open",
        "Sandbox sessions open on this server",
        ServerLoad::sessionsOpen);
    gauge("pysandbox.pool.size", "Warm pool size (pool_size)", ServerLoad::poolSize);
    gauge("pysandbox.pool.ready", "Sandboxes ready in the warm pool", ServerLoad::poolReady);
    gauge(
        "pysandbox.runs.in.flight",
        "Runs this server is executing or about to (not those held for approval)",
        ServerLoad::runsInFlight);
    gauge(
        "pysandbox.runs.waiting",
        "Runs in flight still waiting for their sandbox (a start, an environment build)",
        ServerLoad::runsWaiting);
    gauge(
        "pysandbox.notebooks.queued",
        "Finished runs whose notebooks are still to be written",
        ServerLoad::notebooksQueued);
    for (SecurityEvent.Kind kind : SecurityEvent.Kind.values()) {
      FunctionCounter.builder(
              "pysandbox.security.events",
              this,
              m -> m.securityEvents.get().recorded().getOrDefault(kind.wireName(), 0L))
          .description("Security events this server recorded, by kind (every tenant's)")
          .tag("kind", kind.wireName())
          .register(registry);
    }
    FunctionCounter.builder(
            "pysandbox.security.events.not.stored", this, m -> m.securityEvents.get().notStored())
        .description("Security events counted that never reached the store")
        .register(registry);
    // Shown from 0, so that a graph of failures exists before the first one.
    sandboxStarts(true);
    sandboxStarts(false);
    for (EnvironmentOutcome o : EnvironmentOutcome.values()) {
      environmentBuilds(o);
    }
  }

  private void gauge(String name, String description, ToDoubleFunction<ServerLoad> value) {
    Gauge.builder(name, this, m -> value.applyAsDouble(m.load.get()))
        .description(description)
        .strongReference(true)
        .register(registry);
  }

  /** Methods kept as they are in the method tag; any other is {@code OTHER}, so tags stay few. */
  private static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");

  /**
   * One request answered.
   *
   * @param route a template or a servlet mapping, never a path as sent
   */
  void record(String method, String route, int status, long nanos) {
    Timer.builder("http.server.requests")
        .description("HTTP requests answered, by method, route template and status")
        .tag("method", METHODS.contains(method) ? method : "OTHER")
        .tag("route", route)
        .tag("status", Integer.toString(status))
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void runEnded(RunStatus status, String tier, Long durationMs) {
    String t = tier == null ? "none" : tier;
    Counter.builder("pysandbox.runs")
        .description("Runs that reached their final status on this server, by status and tier")
        .tag("status", status.wireName())
        .tag("tier", t)
        .register(registry)
        .increment();
    if (durationMs != null) {
      histogram("pysandbox.run.duration", "Wall time of the runs' executions, by tier", RUN_BUCKETS)
          .tag("tier", t)
          .register(registry)
          .record(durationMs, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void sandboxStarted(boolean ok, long nanos) {
    sandboxStarts(ok).increment();
    if (ok) {
      recordNanos(
          "pysandbox.sandbox.start.duration",
          "Time from asking for a sandbox to its runner being ready",
          WAIT_BUCKETS,
          nanos);
    }
  }

  private Counter sandboxStarts(boolean ok) {
    return outcomes(
        "pysandbox.sandbox.starts",
        "Sandboxes started for runs and sessions (pool and on demand), by outcome",
        ok ? "started" : "failed");
  }

  @Override
  public void sandboxTaken(PoolTake how, long waitNanos) {
    histogram(
            "pysandbox.pool.wait",
            "Waits of runs and sessions for a fresh sandbox: ready in the warm pool, started for"
                + " it (the pool was empty), or not the pool's kind",
            WAIT_BUCKETS)
        .tag("outcome", how.label())
        .register(registry)
        .record(waitNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void environmentEnsured(EnvironmentOutcome outcome, long nanos) {
    environmentBuilds(outcome).increment();
    if (outcome == EnvironmentOutcome.BUILT) {
      recordNanos(
          "pysandbox.environment.build.duration",
          "Time package environments took to build (or to wait for)",
          BUILD_BUCKETS,
          nanos);
    }
  }

  private Counter environmentBuilds(EnvironmentOutcome outcome) {
    return outcomes(
        "pysandbox.environment.builds",
        "Package environments asked for, by outcome: reused, built, failed",
        outcome.label());
  }

  /** The counter {@code name} of one outcome (registered the first time, then found). */
  private Counter outcomes(String name, String description, String outcome) {
    return Counter.builder(name)
        .description(description)
        .tag("outcome", outcome)
        .register(registry);
  }

  /** Records {@code nanos} in the untagged histogram {@code name}. */
  private void recordNanos(String name, String description, Duration[] buckets, long nanos) {
    histogram(name, description, buckets).register(registry).record(nanos, TimeUnit.NANOSECONDS);
  }

  /** A timer published as a Prometheus histogram with these buckets. */
  private static Timer.Builder histogram(String name, String description, Duration[] buckets) {
    return Timer.builder(name).description(description).serviceLevelObjectives(buckets);
  }

  private static Duration[] seconds(double... values) {
    Duration[] out = new Duration[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = Duration.ofNanos((long) (values[i] * 1e9));
    }
    return out;
  }

  /** Everything, in the Prometheus text format. */
  String scrape() {
    return registry.scrape();
  }
}
