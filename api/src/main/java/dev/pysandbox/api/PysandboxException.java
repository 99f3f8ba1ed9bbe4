package dev.pysandbox.api;

import dev.pysandbox.util.DiskFullException;
import java.io.IOException;
import java.util.Objects;

/** A failure with one of the closed set of {@link ErrorCode}s and a self-diagnosing message. */
public class PysandboxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ErrorCode code;
  private final Boolean retryable;

  public PysandboxException(ErrorCode code, String message) {
    super(message);
    this.code = Objects.requireNonNull(code);
    this.retryable = null;
  }

  /**
   * A failure whose retrying can or cannot succeed whatever its code says (an environment build
   * that failed because the index was unreachable may succeed later; one pip refused will not).
   */
  public PysandboxException(ErrorCode code, String message, boolean retryable) {
    super(message);
    this.code = Objects.requireNonNull(code);
    this.retryable = retryable;
  }

  public PysandboxException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = Objects.requireNonNull(code);
    this.retryable = null;
  }

  public ErrorCode code() {
    return code;
  }

  /**
   * Whether the same call may succeed later: the code's answer unless this failure knows better.
   */
  public boolean retryable() {
    return retryable != null ? retryable : code.retryable();
  }

  /**
   * A write that failed, as callers get it: {@code disk_full} (retryable) when its disk was full,
   * {@code internal} otherwise.
   *
   * @param what what could not be written ("could not write the export /x/y.ipynb")
   */
  public static PysandboxException writeFailed(String what, IOException e) {
    if (e instanceof DiskFullException full) {
      return new PysandboxException(
          ErrorCode.DISK_FULL,
          what + ": " + full.getMessage() + "; nothing was kept; free space and try again",
          e);
    }
    return new PysandboxException(ErrorCode.INTERNAL, what + ": " + e.getMessage(), e);
  }

  public static PysandboxException invalid(String message) {
    return new PysandboxException(ErrorCode.INVALID_ARGUMENT, message);
  }

  /**
   * A value a caller sent, as an error message shows it: quoted, at most 80 characters, newlines
   * escaped; {@code (missing)} for {@code null}.
   */
  public static String quote(String value) {
    if (value == null) {
      return "(missing)";
    }
    String shown = value.length() > 80 ? value.substring(0, 80) + "..." : value;
    return "'" + shown.replace("\n", "\\n") + "'";
  }
}
