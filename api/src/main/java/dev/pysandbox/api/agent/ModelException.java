package dev.pysandbox.api.agent;

import java.time.Duration;

/** A model call that failed. Its message never holds a key or a header's value. */
public class ModelException extends RuntimeException {
  /** What failed. */
  public enum Kind {
    /** 429: try again later (after {@link #retryAfter()} when the provider said). */
    RATE_LIMITED(true),
    /** 5xx, a reset connection: try again. */
    SERVER(true),
    /** No answer within the request timeout. */
    TIMEOUT(true),
    /** An answer that is not a chat completion. */
    MALFORMED(false),
    /** 4xx other than 429: wrong key, unknown model, bad request. */
    REJECTED(false),
    /** The client refused the request (sampling), or has no model to offer. */
    REFUSED(false),
    /** The provider cannot be reached or is not set up. */
    UNAVAILABLE(true);

    private final boolean retryable;

    Kind(boolean retryable) {
      this.retryable = retryable;
    }

    public boolean retryable() {
      return retryable;
    }
  }

  private final Kind kind;
  private final Duration retryAfter;

  public ModelException(Kind kind, String message) {
    this(kind, message, null, null);
  }

  public ModelException(Kind kind, String message, Duration retryAfter, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.retryAfter = retryAfter;
  }

  public Kind kind() {
    return kind;
  }

  /** What the provider's Retry-After asked for, or null. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
