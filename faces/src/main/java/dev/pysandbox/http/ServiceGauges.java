package dev.pysandbox.http;

import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SecurityEventCounts;
import dev.pysandbox.api.ServerLoad;

/**
 * What the metrics' gauges read from the service: its load and its security events' counts, each as
 * nothing when there is no service or it fails, since a scrape must answer whatever the core is
 * doing.
 *
 * @param service the server's own view, or null for none
 */
record ServiceGauges(SandboxService service) {
  /** What the server holds now (sessions, pool, runs). */
  ServerLoad load() {
    try {
      return service == null ? ServerLoad.NONE : service.load();
    } catch (RuntimeException e) {
      return ServerLoad.NONE;
    }
  }

  SecurityEventCounts securityEvents() {
    try {
      return service == null ? SecurityEventCounts.NONE : service.securityEventCounts();
    } catch (RuntimeException e) {
      return SecurityEventCounts.NONE;
    }
  }
}
