package dev.pysandbox.api.agent;

/**
 * A language model to ask: a provider through LangChain4j (module agent-models), or the MCP
 * client's own model through sampling (faces). Thread-safe; a call blocks until the answer, its
 * timeout, or the calling thread's interrupt.
 */
public interface ModelClient {
  /**
   * Asks once: no retry (the agent loop retries, within its time budget).
   *
   * @throws ModelException on any failure, with its kind
   */
  ModelReply complete(ModelRequest request);

  /** sampling, openai, anthropic or ollama. */
  String provider();

  /** The model asked when a request names none (null, the default: the client chooses). */
  default String defaultModel() {
    return null;
  }

  /** Whether requests may carry tools (else, the default, code comes in a ```python block). */
  default boolean supportsTools() {
    return false;
  }
}
