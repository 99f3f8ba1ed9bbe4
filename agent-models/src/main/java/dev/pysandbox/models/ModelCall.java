package dev.pysandbox.models;

import java.time.Duration;

/**
 * The model call in progress on this thread: LangChain4j's chat models call their HTTP client on
 * the caller's thread without a way to pass a per-call setting, so the timeout of {@link
 * dev.pysandbox.api.agent.ModelRequest#timeout()} reaches {@link ExchangeHttpClient} through here.
 * It also notes whether an answer came back, which tells a body LangChain4j could not read
 * (MALFORMED) from a request it refused to send (REJECTED).
 */
final class ModelCall {
  private static final ThreadLocal<ModelCall> CURRENT = new ThreadLocal<>();

  private final Duration timeout;
  private boolean answered;

  private ModelCall(Duration timeout) {
    this.timeout = timeout;
  }

  /** Starts a call on this thread; {@link #end()} it in a finally block. */
  static ModelCall begin(Duration timeout) {
    ModelCall call = new ModelCall(timeout);
    CURRENT.set(call);
    return call;
  }

  /** The call on this thread, or null when the HTTP client is used outside {@link #begin}. */
  static ModelCall current() {
    return CURRENT.get();
  }

  void end() {
    CURRENT.remove();
  }

  /** How long the call may take, or null for the client's own read timeout. */
  Duration timeout() {
    return timeout;
  }

  void answered() {
    answered = true;
  }

  /** Whether the provider's 2xx answer was received (whatever its body). */
  boolean wasAnswered() {
    return answered;
  }
}
