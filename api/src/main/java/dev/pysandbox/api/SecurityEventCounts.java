package dev.pysandbox.api;

import java.util.Map;

/**
 * How many security events a server recorded since it started, for its metrics.
 *
 * @param recorded by kind's wire name, every kind present (0 when none happened); every tenant's
 * @param notStored events counted above that never reached the store (its queue was full, or it
 *     could not be written to)
 */
public record SecurityEventCounts(Map<String, Long> recorded, long notStored) {
  public static final SecurityEventCounts NONE = new SecurityEventCounts(Map.of(), 0);

  public SecurityEventCounts {
    recorded = Map.copyOf(recorded);
  }
}
