package dev.pysandbox.api.agent;

import java.util.Map;

/**
 * A tool offered to a model.
 *
 * @param parameters its arguments as a JSON schema object
 */
public record ToolSpec(String name, String description, Map<String, Object> parameters) {}
