package dev.pysandbox.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * The levels {@code logging/setLevel} takes: the RFC 5424 severities the MCP specification names,
 * and nothing else. The SDK answered any level (or none) with success (issue 23), so both
 * transports check the request before it reaches the SDK and answer -32602 naming the levels.
 */
final class LogLevels {
  /** From the least to the most severe, as the specification lists them. */
  static final List<String> LEVELS =
      List.of("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency");

  private LogLevels() {}

  /** What is wrong with {@code params} of a {@code logging/setLevel} request, or null. */
  static String problem(JsonNode params) {
    JsonNode level = params == null ? null : params.get("level");
    if (level != null && level.isTextual() && LEVELS.contains(level.textValue())) {
      return null;
    }
    String got =
        level == null
            ? "no \"level\""
            : "\"level\" "
                + (level.isTextual()
                    ? "'" + InboundMessages.abbreviate(level.textValue()) + "'"
                    : level.getNodeType().toString().toLowerCase(java.util.Locale.ROOT));
    return LoggingAsked.METHOD
        + " needs \"level\", one of "
        + String.join(", ", LEVELS)
        + "; got "
        + got;
  }
}
