package dev.pysandbox.store;

import java.time.Instant;

/**
 * How a package environment was used, from the run records.
 *
 * @param key the environment's key
 * @param runs how many recorded runs had it
 * @param lastUsedAt when the newest of them was created
 */
public record EnvironmentUse(String key, long runs, Instant lastUsedAt) {}
