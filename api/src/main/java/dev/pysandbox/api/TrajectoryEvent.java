package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * One line of a trajectory ({@code <data_dir>/trajectories/}): one call a face answered, as the
 * core writes it and {@code pysandbox logs} reads it. It says what was called and how it ended,
 * never with what: each argument is kept as its size (a number's or a boolean's value), and all of
 * them as one digest.
 *
 * @param time ISO-8601 instant the call began (UTC)
 * @param face {@code mcp_stdio}, {@code mcp_http}, {@code rest} or {@code cli}
 * @param tool the MCP tool, the REST operation or the CLI command's operation
 * @param tenant whose call it was
 * @param sessionId the session it named or made, or {@code null}
 * @param runId the run it made or named, or {@code null}
 * @param requestId the HTTP request's {@code X-Request-Id}, or {@code null}
 * @param arguments each argument's size, by name (names cut to 64 characters), or {@code null} when
 *     the arguments could not be read
 * @param argumentsOmitted how many arguments are not listed (past the first 24, or all of them when
 *     the line would pass its cap), or {@code null} for none
 * @param argumentsSha256 hex SHA-256 of the arguments' canonical JSON (object members sorted by
 *     name, no white space), or {@code null} when there were none
 * @param status {@code ok} or {@code error}
 * @param errorCode the {@link ErrorCode}'s wire name when the call failed, else {@code null}
 * @param runStatus the run's status when the answer was a run, else {@code null}
 * @param durationMs how long the face took to answer, to the microsecond
 */
public record TrajectoryEvent(
    String time,
    String face,
    String tool,
    String tenant,
    String sessionId,
    String runId,
    String requestId,
    Map<String, ArgumentSize> arguments,
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer argumentsOmitted,
    String argumentsSha256,
    String status,
    String errorCode,
    String runStatus,
    double durationMs) {

  /** {@link #status()} of a call that was answered. */
  public static final String OK = "ok";

  /** {@link #status()} of a call that failed. */
  public static final String ERROR = "error";

  /**
   * One argument, measured: a string's UTF-8 bytes, an array's items, an object's members, a
   * number's or a boolean's value; never a string's content.
   *
   * @param type the JSON type: {@code string}, {@code number}, {@code boolean}, {@code array},
   *     {@code object} or {@code null}
   * @param bytes a string's length in UTF-8 bytes
   * @param items an array's elements or an object's members
   * @param value a number's or a boolean's value
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record ArgumentSize(String type, Long bytes, Integer items, Object value) {
    /** How it reads in a line of text: {@code 120B}, {@code [3]}, {@code {2}}, {@code 30}. */
    @Override
    public String toString() {
      if (type == null) {
        return "?";
      }
      return switch (type) {
        case "string" -> bytes + "B";
        case "array" -> "[" + items + "]";
        case "object" -> "{" + items + "}";
        case "null" -> "null";
        default -> String.valueOf(value);
      };
    }
  }
}
