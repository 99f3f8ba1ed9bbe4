package dev.pysandbox.models;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ModelRequest;

/**
 * A {@link ModelClient} over one of LangChain4j's chat models, built by {@link ModelClients}. The
 * model's own retries are off (the agent loop retries); the request's timeout reaches the HTTP
 * client through {@link ModelCall}.
 */
final class LangChainModelClient implements ModelClient {
  private final String provider;
  private final String defaultModel;
  private final ChatModel model;
  private final String secret;

  LangChainModelClient(String provider, String defaultModel, ChatModel model, String secret) {
    this.provider = provider;
    this.defaultModel = defaultModel;
    this.model = model;
    this.secret = secret;
  }

  @Override
  public ModelReply complete(ModelRequest request) {
    ChatRequest chatRequest;
    try {
      chatRequest = Conversions.request(request);
    } catch (RuntimeException e) {
      throw new ModelException(
          ModelException.Kind.REJECTED,
          provider + ": the request cannot be put to LangChain4j: " + e.getMessage());
    }
    ModelCall call = ModelCall.begin(request.timeout());
    try {
      return Conversions.reply(model.chat(chatRequest));
    } catch (RuntimeException e) {
      throw FailureMapper.map(provider, e, call, secret);
    } finally {
      call.end();
    }
  }

  @Override
  public String provider() {
    return provider;
  }

  @Override
  public String defaultModel() {
    return defaultModel;
  }

  @Override
  public boolean supportsTools() {
    return true;
  }

  @Override
  public String toString() {
    return "ModelClient[" + provider + ", model=" + defaultModel + "]";
  }
}
