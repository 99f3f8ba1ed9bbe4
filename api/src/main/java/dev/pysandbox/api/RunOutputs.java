package dev.pysandbox.api;

import java.util.List;
import java.util.Map;

/**
 * A run's {@code __outputs__} dict.
 *
 * @param outputs the values; those that were not JSON are {@code {"repr", "type"}}
 * @param nonJson the keys whose values were not JSON
 */
public record RunOutputs(String runId, Map<String, Object> outputs, List<String> nonJson) {}
