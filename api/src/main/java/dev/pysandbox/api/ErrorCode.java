package dev.pysandbox.api;

import java.util.Locale;

/**
 * The closed set of error codes every face reports. Each code is mapped here, once, to its wire
 * name, an HTTP status, a CLI exit code and whether retrying the same call can succeed.
 */
public enum ErrorCode {
  INVALID_ARGUMENT(400, 2, false),
  CODE_TOO_LARGE(413, 2, false),
  NOT_FOUND(404, 3, false),
  FILE_EXISTS(409, 2, false),
  ARTIFACT_TOO_LARGE(413, 2, false),
  SESSION_BUSY(409, 4, true),
  SESSION_DEAD(410, 4, false),
  /** The session's idle time ran out and it was closed; its state is gone. */
  SESSION_EXPIRED(410, 4, false),
  /** The session was closed (by a caller or an operator); its state is gone. */
  SESSION_CLOSED(410, 4, false),
  /** The session's server or sandbox went away (a restart, a crash); its state is gone. */
  SESSION_LOST(410, 4, false),
  MAX_SESSIONS(429, 4, true),
  TIMEOUT(504, 5, true),
  APPROVAL_REQUIRED(403, 6, false),
  APPROVAL_EXPIRED(410, 6, false),
  FORBIDDEN(403, 6, false),
  UNAUTHENTICATED(401, 6, false),
  RATE_LIMITED(429, 4, true),
  PAYLOAD_TOO_LARGE(413, 2, false),
  UNSUPPORTED_MEDIA_TYPE(415, 2, false),
  METHOD_NOT_ALLOWED(405, 2, false),
  BACKEND_UNAVAILABLE(503, 7, true),
  ENVIRONMENT_FAILED(422, 8, false),
  STORE_UNAVAILABLE(503, 7, true),
  /** A write did not reach the disk (no space or quota left); nothing partial was kept. */
  DISK_FULL(507, 7, true),
  /** A model provider failed past its retries (agent runs). */
  PROVIDER_ERROR(502, 7, true),
  INTERNAL(500, 70, false);

  private final int httpStatus;
  private final int exitCode;
  private final boolean retryable;

  ErrorCode(int httpStatus, int exitCode, boolean retryable) {
    this.httpStatus = httpStatus;
    this.exitCode = exitCode;
    this.retryable = retryable;
  }

  /** The name on the wire, e.g. {@code invalid_argument}. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public int httpStatus() {
    return httpStatus;
  }

  /** The process exit code the CLI uses when a command fails with this error. */
  public int exitCode() {
    return exitCode;
  }

  /** True when the same call may succeed later without being changed. */
  public boolean retryable() {
    return retryable;
  }
}
