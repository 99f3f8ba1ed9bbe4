package dev.pysandbox.api;

import java.util.List;

/**
 * A page of security events, newest first.
 *
 * @param events at most the query's limit
 * @param nextCursor give it as {@code cursor} for the next (older) page; {@code null} when no older
 *     event matches
 */
public record SecurityEventList(List<SecurityEvent> events, String nextCursor) {
  public SecurityEventList {
    events = List.copyOf(events);
  }
}
