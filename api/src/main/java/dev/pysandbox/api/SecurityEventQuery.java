package dev.pysandbox.api;

import java.time.Instant;
import java.util.regex.Pattern;

/**
 * A page of one tenant's security events, newest first.
 *
 * @param since only events at or after this: an age before now ({@code 30s}, {@code 10m}, {@code
 *     2h}, {@code 7d}, or ISO-8601 {@code PT1H30M}) or an ISO-8601 instant ({@code
 *     2026-11-25T15:00:00Z}); {@code null} for all
 * @param kind only events of this kind, or {@code null}
 * @param sessionId only events of this session ({@link Ids}), or {@code null}
 * @param limit 1..{@value #MAX_LIMIT} events
 * @param cursor the {@link SecurityEventList#nextCursor()} of the page before, or {@code null} for
 *     the newest page
 * @throws PysandboxException {@code invalid_argument} naming what is wrong
 */
public record SecurityEventQuery(
    String since, SecurityEvent.Kind kind, String sessionId, int limit, String cursor) {
  public static final int MAX_LIMIT = 1000;
  public static final int DEFAULT_LIMIT = 100;

  /** A cursor is an event's id: {@code evt_} and 16 hex digits. */
  public static final String CURSOR_REGEX = "evt_[0-9a-f]{16}";

  private static final Pattern CURSOR = Pattern.compile(CURSOR_REGEX);

  public SecurityEventQuery {
    if (since != null) {
      Since.check(since, "since");
    }
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
    }
    if (limit < 1 || limit > MAX_LIMIT) {
      throw PysandboxException.invalid("limit must be 1.." + MAX_LIMIT + ", got " + limit);
    }
    if (cursor != null && !CURSOR.matcher(cursor).matches()) {
      throw PysandboxException.invalid(
          "cursor "
              + PysandboxException.quote(cursor)
              + " is not one: give the next_cursor of the page before (evt_ and 16 hex digits)");
    }
  }

  /** The newest {@value #DEFAULT_LIMIT} events of every kind. */
  public static SecurityEventQuery newest() {
    return new SecurityEventQuery(null, null, null, DEFAULT_LIMIT, null);
  }

  /** The same query for the page after the event {@code cursor}. */
  public SecurityEventQuery after(String cursor) {
    return new SecurityEventQuery(since, kind, sessionId, limit, cursor);
  }

  /**
   * The earliest instant listed, for {@code now}; {@code null} when every event is (no {@code
   * since}, or an age reaching back before 1970).
   */
  public Instant sinceAt(Instant now) {
    return since == null ? null : Since.at(since, now, "since");
  }
}
