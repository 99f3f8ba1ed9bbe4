/**
 * The model providers of agent runs (openai, anthropic, ollama) behind {@link
 * dev.pysandbox.api.agent.ModelClient}, through LangChain4j's chat models: {@link
 * dev.pysandbox.models.ModelClients} makes one from the agent settings; everything else here is
 * package-private. No provider protocol is written here: LangChain4j speaks the wire, over an HTTP
 * client of ours that keeps what its exceptions drop (the status, Retry-After) and aborts an
 * exchange when the calling thread is interrupted. It may use {@code api} and {@code config} only;
 * {@code app} builds it into the server.
 */
package dev.pysandbox.models;
