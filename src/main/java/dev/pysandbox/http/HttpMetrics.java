package dev.pysandbox.http;

import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventCounts;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * What {@code GET /metrics} shows, in Prometheus text: HTTP requests by method, route (the servlet
 * mapping, so unknown paths cannot multiply series) and status, with their latency; requests in
 * flight; open sandbox sessions; security events by kind ({@code
 * pysandbox_security_events_total{kind="limit_stopped_run"}}); the JVM's memory, threads, CPU and
 * uptime.
 */
final class HttpMetrics {
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  // Micrometer holds a function counter's state object weakly: this keeps it while we live.
  private final Supplier<SecurityEventCounts> securityEvents;

  HttpMetrics(
      InFlight inFlight, IntSupplier openSessions, Supplier<SecurityEventCounts> securityEvents) {
    this.securityEvents = securityEvents;
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    Gauge.builder("http.server.requests.active", inFlight, InFlight::count)
        .description("HTTP requests being answered (streams that only listen are not counted)")
        .register(registry);
    Gauge.builder("pysandbox.sessions.open", openSessions, s -> s.getAsInt())
        .description("Sandbox sessions open on this server")
        .register(registry);
    for (SecurityEvent.Kind kind : SecurityEvent.Kind.values()) {
      FunctionCounter.builder(
              "pysandbox.security.events",
              securityEvents,
              s -> s.get().recorded().getOrDefault(kind.wireName(), 0L))
          .description("Security events this server recorded, by kind (every tenant's)")
          .tag("kind", kind.wireName())
          .register(registry);
    }
    FunctionCounter.builder(
            "pysandbox.security.events.not.stored", securityEvents, s -> s.get().notStored())
        .description("Security events counted that never reached the store")
        .register(registry);
  }

  /** Methods kept as they are in the method tag; any other is {@code OTHER}, so tags stay few. */
  private static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");

  void record(String method, String route, int status, long nanos) {
    Timer.builder("http.server.requests")
        .description("HTTP requests answered")
        .tag("method", METHODS.contains(method) ? method : "OTHER")
        .tag("route", route)
        .tag("status", Integer.toString(status))
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Everything, in the Prometheus text format. */
  String scrape() {
    return registry.scrape();
  }
}
