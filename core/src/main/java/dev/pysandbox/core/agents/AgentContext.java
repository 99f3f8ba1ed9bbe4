package dev.pysandbox.core.agents;

import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.config.AgentConfig;
import java.time.Duration;
import java.util.function.Supplier;

/** What one agent run's loop needs of the server: its settings and the sandbox it describes. */
final class AgentContext {
  private final AgentConfig config;
  private final SandboxService service;
  private final String sessionId;
  private final Supplier<String> interpreter;
  private final int runTimeoutSeconds;

  AgentContext(
      AgentConfig config,
      SandboxService service,
      String sessionId,
      Supplier<String> interpreter,
      int runTimeoutSeconds) {
    this.config = config;
    this.service = service;
    this.sessionId = sessionId;
    this.interpreter = interpreter;
    this.runTimeoutSeconds = runTimeoutSeconds;
  }

  String systemPrompt(boolean tools) {
    SessionInfo session = service.getSession(sessionId);
    return AgentPrompt.system(
        tools,
        interpreter.get(),
        session,
        AgentTools.listFiles(service, sessionId),
        config.observationChars());
  }

  Duration requestTimeout() {
    return config.requestTimeout();
  }

  int maxTokens() {
    return config.maxTokens();
  }

  int observationChars() {
    return config.observationChars();
  }

  int runTimeoutSeconds() {
    return runTimeoutSeconds;
  }
}
