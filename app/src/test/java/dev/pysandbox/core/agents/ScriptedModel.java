package dev.pysandbox.core.agents;

import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ModelRequest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.function.Function;

/**
 * A model in the JVM whose replies a test scripts (the loop's semantics without a wire; the
 * providers' wire is tested against ScriptedModelServer). Each reply is a function of the request;
 * when the script is empty, {@code fallback} answers. Records every request.
 */
final class ScriptedModel implements ModelClient {
  final List<ModelRequest> requests = new CopyOnWriteArrayList<>();
  final LinkedBlockingDeque<Function<ModelRequest, ModelReply>> script =
      new LinkedBlockingDeque<>();
  final CountDownLatch asked = new CountDownLatch(1);
  volatile Function<ModelRequest, ModelReply> fallback =
      r -> new ModelReply("no more script: done", List.of(), 10, 5, "scripted");
  private final boolean tools;

  ScriptedModel(boolean tools) {
    this.tools = tools;
  }

  ScriptedModel then(Function<ModelRequest, ModelReply> reply) {
    script.add(reply);
    return this;
  }

  ScriptedModel thenText(String text) {
    return then(r -> text(text));
  }

  static ModelReply text(String text) {
    return new ModelReply(text, List.of(), 100, 20, "scripted-1");
  }

  /** A reply that blocks until the calling thread is interrupted (a model call in flight). */
  static ModelReply hang(ModelRequest r) {
    try {
      Thread.sleep(Long.MAX_VALUE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new ModelException(ModelException.Kind.UNAVAILABLE, "interrupted");
  }

  @Override
  public ModelReply complete(ModelRequest request) {
    requests.add(request);
    asked.countDown();
    Function<ModelRequest, ModelReply> next = script.poll();
    return (next == null ? fallback : next).apply(request);
  }

  @Override
  public String provider() {
    return "sampling";
  }

  @Override
  public String defaultModel() {
    return null;
  }

  @Override
  public boolean supportsTools() {
    return tools;
  }
}
