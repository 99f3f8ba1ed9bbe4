package dev.pysandbox.agent;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One scripted answer of {@link ScriptedModelServer}: text, tool calls and usage figures in the
 * wire format of the request (OpenAI chat completions or Anthropic messages), or a failure (a
 * status with its Retry-After, a body that is not JSON, a request held open). Immutable: each
 * method returns a new reply.
 *
 * <pre>{@code
 * text("thinking").withToolCall("run_python", "{\"code\":\"print(1)\"}").usage(12, 5)
 * status(429).retryAfter(2)
 * text("late").delay(Duration.ofSeconds(30))
 * }</pre>
 */
public final class ScriptedReply {
  /** What the server does with the request. */
  enum Kind {
    ANSWER,
    STATUS,
    MALFORMED,
    HANG
  }

  /** A tool call the reply makes; {@code argumentsJson} is sent as written (maybe malformed). */
  record Call(String name, String argumentsJson) {}

  final Kind kind;
  final String text;
  final List<Call> calls;
  final Integer promptTokens;
  final Integer completionTokens;
  final Duration delay;
  final int status;
  final String retryAfter;

  private ScriptedReply(
      Kind kind,
      String text,
      List<Call> calls,
      Integer promptTokens,
      Integer completionTokens,
      Duration delay,
      int status,
      String retryAfter) {
    this.kind = kind;
    this.text = text;
    this.calls = List.copyOf(calls);
    this.promptTokens = promptTokens;
    this.completionTokens = completionTokens;
    this.delay = delay;
    this.status = status;
    this.retryAfter = retryAfter;
  }

  private static ScriptedReply of(Kind kind, String text, int status) {
    return new ScriptedReply(kind, text, List.of(), null, null, Duration.ZERO, status, null);
  }

  /** An answer with this text (and no usage figures unless {@link #usage} adds them). */
  public static ScriptedReply text(String text) {
    return of(Kind.ANSWER, text, 200);
  }

  /** An answer calling one tool, with no text; {@link #withToolCall} adds more calls. */
  public static ScriptedReply toolCall(String name, String argumentsJson) {
    return of(Kind.ANSWER, null, 200).withToolCall(name, argumentsJson);
  }

  /** A failed exchange: this status and a provider-like error body. */
  public static ScriptedReply status(int status) {
    return of(Kind.STATUS, null, status);
  }

  /** The default fallback: a 500 saying that nothing was scripted for request {@code n}. */
  static ScriptedReply unscripted(int n) {
    return of(Kind.STATUS, "ScriptedModelServer: nothing scripted for request " + n, 500);
  }

  /** A 200 whose body is not JSON. */
  public static ScriptedReply malformed() {
    return of(Kind.MALFORMED, null, 200);
  }

  /**
   * A request held open (status 200 and a trickle of whitespace, so that a client going away is
   * seen) until {@link ScriptedModelServer#release()} or {@link ScriptedModelServer#close()}.
   */
  public static ScriptedReply hang() {
    return of(Kind.HANG, null, 200);
  }

  /** This reply with one more tool call. */
  public ScriptedReply withToolCall(String name, String argumentsJson) {
    List<Call> more = new ArrayList<>(calls);
    more.add(new Call(name, argumentsJson));
    return new ScriptedReply(
        kind, text, more, promptTokens, completionTokens, delay, status, retryAfter);
  }

  /** This reply with the provider's token counts. */
  public ScriptedReply usage(int prompt, int completion) {
    return new ScriptedReply(kind, text, calls, prompt, completion, delay, status, retryAfter);
  }

  /** This reply, sent only after {@code delay} (cut short when the server closes). */
  public ScriptedReply delay(Duration delay) {
    return new ScriptedReply(
        kind, text, calls, promptTokens, completionTokens, delay, status, retryAfter);
  }

  /** A failure with this error message in its body (a provider echoing what it was sent). */
  public ScriptedReply message(String errorMessage) {
    return new ScriptedReply(
        kind, errorMessage, calls, promptTokens, completionTokens, delay, status, retryAfter);
  }

  /** This reply with a Retry-After header of so many seconds. */
  public ScriptedReply retryAfter(long seconds) {
    return retryAfter(Long.toString(seconds));
  }

  /** This reply with a Retry-After header as written (an HTTP date, say). */
  public ScriptedReply retryAfter(String headerValue) {
    return new ScriptedReply(
        kind, text, calls, promptTokens, completionTokens, delay, status, headerValue);
  }
}
