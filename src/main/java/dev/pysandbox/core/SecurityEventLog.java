package dev.pysandbox.core;

import dev.pysandbox.api.SecurityEvent;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records security events (approvals, limits that stopped runs, denied imports and network
 * attempts, sandboxes that died). Never throws to its caller: a failure to record is logged.
 */
final class SecurityEventLog {
  private static final Logger log = LoggerFactory.getLogger(SecurityEventLog.class);

  /**
   * Records one event.
   *
   * @param detail a small JSON object saying what exactly
   */
  void record(
      String tenant,
      SecurityEvent.Kind kind,
      String sessionId,
      String runId,
      Map<String, Object> detail) {
    log.info(
        "security event {} (tenant {}, session {}, run {}): {}",
        kind,
        tenant,
        sessionId,
        runId,
        detail);
  }
}
