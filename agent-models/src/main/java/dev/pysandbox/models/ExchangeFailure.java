package dev.pysandbox.models;

import dev.langchain4j.exception.HttpException;
import dev.pysandbox.api.agent.ModelException;
import java.time.Duration;

/**
 * What {@link ExchangeHttpClient} throws when an exchange fails: LangChain4j maps an {@link
 * HttpException} to its own exceptions by status and keeps it as their cause, but drops the
 * response's headers; this one keeps what {@link FailureMapper} needs (the kind and the
 * Retry-After). Its message holds the status and the address only: the body, which a provider may
 * fill with what it was sent (a key), is kept apart for {@link FailureMapper} to redact.
 */
final class ExchangeFailure extends HttpException {
  private static final long serialVersionUID = 1L;

  private final ModelException.Kind kind;
  private final transient Duration retryAfter;
  private final String body;

  /** A response with a status outside 2xx; {@code body} as received (may be null). */
  ExchangeFailure(int status, String message, String body, Duration retryAfter) {
    super(status, message);
    this.kind = kindOf(status);
    this.retryAfter = retryAfter;
    this.body = body;
  }

  /** No response: a timeout, a reset or refused connection, an interrupt (status 0). */
  ExchangeFailure(ModelException.Kind kind, String message) {
    super(0, message);
    this.kind = kind;
    this.retryAfter = null;
    this.body = null;
  }

  ModelException.Kind kind() {
    return kind;
  }

  Duration retryAfter() {
    return retryAfter;
  }

  /** The response's body, or null (no response, or an empty body). */
  String body() {
    return body == null || body.isEmpty() ? null : body;
  }

  static ModelException.Kind kindOf(int status) {
    if (status == 429) {
      return ModelException.Kind.RATE_LIMITED;
    }
    if (status == 408) {
      return ModelException.Kind.TIMEOUT;
    }
    if (status >= 500) {
      return ModelException.Kind.SERVER;
    }
    return ModelException.Kind.REJECTED;
  }
}
