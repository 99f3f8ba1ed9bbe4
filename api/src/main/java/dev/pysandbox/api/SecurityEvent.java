package dev.pysandbox.api;

import java.util.Map;

/**
 * Something a security reviewer wants to see, recorded as it happens ({@code list_security_events},
 * {@code pysandbox events}).
 *
 * @param eventId {@code evt_} and 16 hex digits (null until recorded)
 * @param kind one of {@link Kind}'s wire names
 * @param tenant the tenant it concerns; never on the wire (a caller sees only its own)
 * @param sessionId the session, or null
 * @param runId the run, or null
 * @param at ISO-8601 instant
 * @param detail what exactly, as a small JSON object (the limit, the module, the approval id …)
 */
public record SecurityEvent(
    String eventId,
    String kind,
    @com.fasterxml.jackson.annotation.JsonIgnore String tenant,
    String sessionId,
    String runId,
    String at,
    Map<String, Object> detail) {

  /** {@code detail} is copied in its order, without the entries whose value is null. */
  public SecurityEvent {
    Map<String, Object> copy = new java.util.LinkedHashMap<>();
    if (detail != null) {
      detail.forEach(
          (k, v) -> {
            if (k != null && v != null) {
              copy.put(k, v);
            }
          });
    }
    detail = java.util.Collections.unmodifiableMap(copy);
  }

  /** The kinds of security event. */
  public enum Kind implements WireEnum {
    APPROVAL_REQUESTED,
    APPROVAL_APPROVED,
    APPROVAL_DENIED,
    APPROVAL_EXPIRED,
    LIMIT_STOPPED_RUN,
    IMPORT_DENIED,
    NETWORK_DENIED,
    NETWORK_ALLOWED,
    SANDBOX_DIED,
    /** An agent run was stopped by one of its budgets (issue 26). */
    AGENT_BUDGET_STOPPED,
    /** An agent's model asked for a tool it does not have, or with arguments it may not pass. */
    AGENT_TOOL_REFUSED;

    @Override
    public String toString() {
      return wireName();
    }
  }
}
