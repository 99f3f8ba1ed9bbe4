package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * How and when a session ended, kept for {@code session_retention} after the end: a call naming it
 * in that time is told ({@code session_expired}, {@code session_closed}, {@code session_lost}, or
 * the error its creation failed with) instead of getting a new, empty session under its name.
 *
 * @param as {@code expired} (its idle TTL ran out), {@code closed} (close_session, an operator),
 *     {@code lost} (its server stopped or died with it open) or {@code failed} (its creation
 *     failed; nothing was ever made)
 * @param at ISO-8601 instant of the end
 * @param reason why, in words ({@code idle for 31 min (ttl 30 min)}, the creation's error message)
 * @param errorCode for {@code failed}: the wire name of the creation's error code; else null
 */
public record SessionEnd(
    String as,
    String at,
    String reason,
    @JsonInclude(JsonInclude.Include.NON_NULL) String errorCode) {
  public static final String EXPIRED = "expired";
  public static final String CLOSED = "closed";
  public static final String LOST = "lost";
  public static final String FAILED = "failed";

  public static SessionEnd of(String as, java.time.Instant at, String reason) {
    return new SessionEnd(as, at.toString(), reason, null);
  }
}
