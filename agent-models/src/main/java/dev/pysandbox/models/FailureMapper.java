package dev.pysandbox.models;

import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelException.Kind;

/**
 * Whatever a LangChain4j chat model threw, as a {@link ModelException} of the right kind. The
 * exchange's own failure ({@link ExchangeFailure}, somewhere in the cause chain) says the kind;
 * without one, a call that got its answer failed on the body (MALFORMED) and one that got none was
 * refused before it was sent (REJECTED: an unknown model, an option the provider lacks).
 *
 * <p>The exception made carries no cause: LangChain4j's exceptions repeat response bodies, which a
 * provider may fill with what it was sent. Its message names the provider, the address and the
 * start of the body, with the key (when one is set) cut out before the text is shortened.
 */
final class FailureMapper {
  /** The most characters of a body or an error's text kept in a message. */
  static final int DETAIL_CHARS = 300;

  private FailureMapper() {}

  static ModelException map(String provider, Throwable thrown, ModelCall call, String secret) {
    ExchangeFailure failure = find(thrown);
    if (failure != null) {
      String body = failure.body();
      return new ModelException(
          failure.kind(),
          provider
              + ": "
              + failure.getMessage()
              + (body == null ? "" : ": " + detail(body, secret)),
          failure.retryAfter(),
          null);
    }
    Throwable root = root(thrown);
    String what =
        detail(
            root.getClass().getSimpleName()
                + (root.getMessage() == null ? "" : ": " + root.getMessage()),
            secret);
    if (call.wasAnswered()) {
      return new ModelException(
          Kind.MALFORMED,
          provider + ": the answer is not a chat completion LangChain4j can read: " + what,
          null,
          null);
    }
    return new ModelException(
        Kind.REJECTED,
        provider + ": the request was refused before it was sent: " + what,
        null,
        null);
  }

  private static ExchangeFailure find(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof ExchangeFailure f) {
        return f;
      }
    }
    return null;
  }

  private static Throwable root(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  /** One line, the key cut out, then shortened (in that order: a cut key could not be found). */
  static String detail(String text, String secret) {
    String line = redact(text, secret).replaceAll("\\s+", " ").strip();
    return line.length() <= DETAIL_CHARS ? line : line.substring(0, DETAIL_CHARS) + "…";
  }

  /** The text with every occurrence of the key replaced. */
  static String redact(String text, String secret) {
    if (text == null || secret == null || secret.isEmpty()) {
      return text;
    }
    return text.replace(secret, "(key)");
  }
}
