package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code llm_query} sub-calls of one connection's requests: the runner's {@code subcall} frame
 * ({@code {"id":"r…","type":"subcall","qid":N,"prompt":"…"}}) is checked, handed to the request's
 * {@link RequestListener#subcall} on the server's blocking pool (never the hub's thread, which
 * serves every sandbox), and answered with a {@code subcall_reply} op ({@code
 * {"op":"subcall_reply", "id":"r…","qid":N,"text":"…"}} or {@code "error":"…"} instead of text).
 *
 * <p>The sandbox is an adversary, so everything is bounded: one sub-call in flight per request (a
 * second one is answered with an error at once, never queued), a prompt of at most {@link
 * #MAX_PROMPT_BYTES}, an answer of at most {@link #MAX_ANSWER_BYTES}. A frame the runner never
 * sends (a prompt that is not a string or is too long, a {@code qid} that is not a number) is a
 * protocol violation: the caller cuts the sandbox off. A sub-call in flight when its request ends,
 * is interrupted or the connection is lost is cancelled (its thread interrupted); an interrupted
 * one is answered with an error, in case the code did not take the KeyboardInterrupt.
 */
final class Subcalls {
  private static final Logger log = LoggerFactory.getLogger(Subcalls.class);
  private static final ObjectMapper JSON = Json.mapper();

  /** Most bytes of UTF-8 a prompt may have (the runner checks first: ValueError). */
  static final int MAX_PROMPT_BYTES = 64 * 1024;

  /** Most bytes of UTF-8 an answer may have; a longer one fails the call. */
  static final int MAX_ANSWER_BYTES = 256 * 1024;

  /**
   * Most bytes a {@code subcall} frame may have: the runner's JSON is ASCII, and its escapes make
   * up to six bytes of one byte of the prompt (a control character); the rest of the frame is
   * small.
   */
  static final long MAX_FRAME_BYTES = 6L * MAX_PROMPT_BYTES + 1024;

  private final String sandboxId;
  private final Executor executor;
  private final Consumer<ObjectNode> send;

  // Guarded by this: the one sub-call in flight, if any.
  private String requestId;
  private long qid;
  private FutureTask<Void> task;
  private long serial;

  /**
   * @param send writes one op frame to the runner (any thread)
   */
  Subcalls(String sandboxId, Executor executor, Consumer<ObjectNode> send) {
    this.sandboxId = sandboxId;
    this.executor = executor;
    this.send = send;
  }

  /**
   * A {@code subcall} frame of the request {@code id} in flight (hub thread).
   *
   * @return why the frame breaks the protocol, or {@code null} when it was taken
   */
  String asked(String id, RequestListener listener, JsonNode frame) {
    if (!id.equals(frame.path("id").asText())) {
      return "its llm_query frame names another request";
    }
    JsonNode q = frame.get("qid");
    JsonNode p = frame.get("prompt");
    if (q == null || !q.canConvertToExactIntegral() || !q.canConvertToLong() || q.asLong() < 0) {
      return "its llm_query frame has no qid (a whole number)";
    }
    if (p == null || !p.isTextual()) {
      return "its llm_query frame has no prompt (a string)";
    }
    String prompt = p.textValue();
    long bytes = utf8Length(prompt);
    if (bytes > MAX_PROMPT_BYTES) {
      return "its llm_query prompt was "
          + bytes
          + " bytes of UTF-8, over the "
          + MAX_PROMPT_BYTES / 1024
          + " KiB one may have";
    }
    long n = q.asLong();
    FutureTask<Void> mine;
    synchronized (this) {
      if (task != null && id.equals(requestId)) {
        long busy = qid;
        reply(
            id,
            n,
            null,
            "llm_query "
                + busy
                + " is still being answered; one llm_query at a time (wait for its answer)");
        return null;
      }
      long s = ++serial;
      mine = new FutureTask<>(() -> answer(s, id, n, listener, prompt), null);
      requestId = id;
      qid = n;
      task = mine;
    }
    try {
      executor.execute(mine);
    } catch (RejectedExecutionException e) {
      if (finished(mine)) {
        reply(id, n, null, "the server is stopping and answers no llm_query");
      }
    }
    return null;
  }

  /**
   * The request in flight ends or the connection is lost: its sub-call, if any, is cancelled and
   * not answered (any thread).
   */
  void ended() {
    FutureTask<Void> t;
    synchronized (this) {
      t = task;
      task = null;
    }
    if (t != null) {
      t.cancel(true);
    }
  }

  /** The request {@code id} is interrupted: its sub-call, if any, is cancelled and answered. */
  void interrupted(String id) {
    FutureTask<Void> t;
    long n;
    synchronized (this) {
      if (task == null || !id.equals(requestId)) {
        return;
      }
      t = task;
      n = qid;
      task = null;
    }
    t.cancel(true);
    reply(id, n, null, "llm_query was interrupted (the run was cancelled or passed a limit)");
  }

  /** Asks the listener (a pool thread) and answers, unless the call was cancelled meanwhile. */
  private void answer(long s, String id, long n, RequestListener listener, String prompt) {
    String text = null;
    String error;
    try {
      text = listener.subcall(prompt);
      error = text == null ? "llm_query got no answer (the model's answer was empty)" : null;
      long bytes = text == null ? 0 : utf8Length(text);
      if (bytes > MAX_ANSWER_BYTES) {
        text = null;
        error =
            "llm_query's answer was "
                + bytes
                + " bytes of UTF-8, over the "
                + MAX_ANSWER_BYTES / 1024
                + " KiB one answer may carry; ask for a shorter one";
      }
    } catch (RuntimeException e) {
      error = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    } catch (StackOverflowError | OutOfMemoryError e) {
      log.warn("worker {}: answering llm_query failed: {}", sandboxId, e.toString());
      error = "the server failed answering llm_query: " + e;
    }
    synchronized (this) {
      if (task == null || serial != s) {
        return; // cancelled: the request ended or was interrupted, or the connection is gone
      }
      task = null;
    }
    reply(id, n, text, error);
  }

  /** Clears {@code t} if it is still the call in flight; true when it was. */
  private synchronized boolean finished(FutureTask<Void> t) {
    if (task != t) {
      return false;
    }
    task = null;
    return true;
  }

  private void reply(String id, long n, String text, String error) {
    ObjectNode msg = JSON.createObjectNode();
    msg.put("op", "subcall_reply");
    msg.put("id", id);
    msg.put("qid", n);
    if (error != null) {
      msg.put("error", error);
    } else {
      msg.put("text", text);
    }
    try {
      send.accept(msg);
    } catch (IllegalStateException e) {
      log.debug("worker {}: llm_query's answer not sent: {}", sandboxId, e.toString());
    }
  }

  /** The length of {@code s} as UTF-8, counted without encoding it (a lone surrogate as 3). */
  static long utf8Length(String s) {
    long n = 0;
    for (int i = 0, len = s.length(); i < len; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < len
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }
}
