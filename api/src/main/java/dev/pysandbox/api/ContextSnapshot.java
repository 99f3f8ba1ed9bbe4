package dev.pysandbox.api;

import java.util.List;
import java.util.Map;

/**
 * A session's globals. Each variable is {@code {"type": ..., "value": ...}} when its value is JSON,
 * else {@code {"type": ..., "repr": ...}}.
 *
 * @param missing names asked for that are not defined
 */
public record ContextSnapshot(
    String sessionId, Map<String, Object> variables, List<String> missing) {}
