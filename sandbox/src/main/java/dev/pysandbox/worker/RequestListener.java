package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.PysandboxException;
import java.nio.ByteBuffer;

/**
 * Told about one request's output as it arrives, so that it can be shown live, and asked the
 * answers of its code's {@code llm_query} calls. {@link #output} and {@link #display} are called on
 * the hub's one thread, which serves every sandbox: they must return at once and must not keep the
 * buffer; {@link #subcall} is called on a thread that may wait.
 */
public interface RequestListener {
  RequestListener NONE =
      new RequestListener() {
        @Override
        public void output(boolean stderr, ByteBuffer bytes) {}

        @Override
        public void display(ObjectNode bundle, long frameBytes) {}
      };

  /**
   * Bytes the code wrote to stdout (or stderr) while the request ran, as read: not split at lines
   * nor at UTF-8 characters. The buffer is the hub's: read it now, do not keep it.
   */
  void output(boolean stderr, ByteBuffer bytes);

  /**
   * A MIME bundle the code displayed (taken into the request's answer as well).
   *
   * @param frameBytes the size of the frame that carried it
   */
  void display(ObjectNode bundle, long frameBytes);

  /**
   * {@code llm_query(prompt)} called by the request's code: the answer the code gets. Called on a
   * thread of the server's blocking pool, never the hub's, at most one call at a time per request;
   * it may take as long as a model call, and is interrupted when the request ends or is interrupted
   * first (its answer then goes nowhere).
   *
   * @param prompt at most 64 KiB as UTF-8
   * @return the answer; one over 256 KiB as UTF-8 fails the call (the code gets RuntimeError)
   * @throws RuntimeException whose message the code's {@code RuntimeError} carries (this default: a
   *     request whose code may not ask a model)
   */
  default String subcall(String prompt) {
    throw PysandboxException.invalid(
        "llm_query is available only in the code of an agent run (agent_run)");
  }
}
