package dev.pysandbox.api;

import java.util.Map;

/**
 * One call a face answered, as it hands it to {@link SandboxService#recordCall} for the caller's
 * trajectory: which face and tool, the session and run it named or made, how it ended and how long
 * it took. The arguments travel as the call received them so that the core can measure them; the
 * core keeps only each argument's size (a number's or a boolean's value) and a digest of them all,
 * never a string, so no code, file content or context value reaches the log.
 *
 * @param face the face that answered
 * @param tool the MCP tool, the REST route's operation id ({@code METHOD /template} for a method
 *     the path does not take), or the CLI command's operation
 * @param arguments the call's JSON arguments as received, or {@code null} when they could not be
 *     read
 * @param sessionId the session the call named or made, or {@code null}
 * @param runId the run the call made or named, or {@code null}
 * @param requestId the HTTP request's {@code X-Request-Id}, or {@code null}
 * @param errorCode how the call failed; {@code null} when it succeeded
 * @param runStatus the run's status when the answer is a run (or a cancel), else {@code null}
 * @param durationNanos how long the face took to answer
 */
public record CallRecord(
    Face face,
    String tool,
    Map<String, ?> arguments,
    String sessionId,
    String runId,
    String requestId,
    ErrorCode errorCode,
    RunStatus runStatus,
    long durationNanos) {

  /** The faces calls come through. */
  public enum Face implements WireEnum {
    MCP_STDIO,
    MCP_HTTP,
    REST,
    CLI,
    /** A step of an agent run (issue 26). */
    AGENT;

    @Override
    public String toString() {
      return wireName();
    }
  }

  /**
   * A call that was answered with {@code result}: the session, run and run status are taken from
   * the result where it names them (a session made without an id, a run's own session), else from
   * the arguments {@code session_id} and {@code run_id}.
   *
   * @param result an api record, or the JSON object of one (MCP's {@code structuredContent}), or
   *     {@code null}
   */
  public static CallRecord answered(
      Face face,
      String tool,
      Map<String, ?> arguments,
      Object result,
      String requestId,
      long durationNanos) {
    Named named = Named.of(result);
    return new CallRecord(
        face,
        tool,
        arguments,
        named.sessionId != null ? named.sessionId : argument(arguments, "session_id"),
        named.runId != null ? named.runId : argument(arguments, "run_id"),
        requestId,
        null,
        named.runStatus,
        durationNanos);
  }

  /** A call that failed with {@code error}; the session and run are the arguments'. */
  public static CallRecord failed(
      Face face,
      String tool,
      Map<String, ?> arguments,
      ErrorCode error,
      String requestId,
      long durationNanos) {
    return new CallRecord(
        face,
        tool,
        arguments,
        argument(arguments, "session_id"),
        argument(arguments, "run_id"),
        requestId,
        error,
        null,
        durationNanos);
  }

  /** This call with {@code runId} as its run when it names none (a run streamed to its caller). */
  public CallRecord withRunIfNone(String runId) {
    if (this.runId != null || runId == null) {
      return this;
    }
    return new CallRecord(
        face, tool, arguments, sessionId, runId, requestId, errorCode, runStatus, durationNanos);
  }

  private static String argument(Map<String, ?> arguments, String name) {
    return arguments != null && arguments.get(name) instanceof String s ? s : null;
  }

  /** What a result names. */
  private record Named(String sessionId, String runId, RunStatus runStatus) {
    static Named of(Object result) {
      if (result instanceof RunRecord r) {
        return new Named(r.sessionId(), r.runId(), r.status());
      }
      if (result instanceof CancelResult c) {
        return new Named(null, c.runId(), c.status());
      }
      if (result instanceof SessionInfo s) {
        return new Named(s.sessionId(), null, null);
      }
      if (result instanceof UploadResult u) {
        return new Named(u.sessionId(), null, null);
      }
      if (result instanceof ArtifactList l) {
        return new Named(l.sessionId(), l.runId(), null);
      }
      if (result instanceof ContextSnapshot c) {
        return new Named(c.sessionId(), null, null);
      }
      if (result instanceof RunOutputs o) {
        return new Named(null, o.runId(), null);
      }
      if (result instanceof Map<?, ?> json) {
        String run = json.get("run_id") instanceof String s ? s : null;
        RunStatus status = null;
        if (run != null && json.get("status") instanceof String st) {
          try {
            status = WireEnum.parse(RunStatus.class, st);
          } catch (PysandboxException e) {
            // not a run's status
          }
        }
        return new Named(json.get("session_id") instanceof String s ? s : null, run, status);
      }
      return new Named(null, null, null);
    }
  }
}
