package dev.pysandbox.core.sessions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.core.requests.RequestValidator;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.worker.WorkerLostException;
import dev.pysandbox.worker.WorkerReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The worker protocol's context operations on a session ({@code get_context}, {@code set_context},
 * {@code clear_context}), each under the session's lock; a runner that dies or does not answer
 * within 30 s leaves its session dead.
 */
public final class ContextCalls {
  private static final long TIMEOUT_SECONDS = 30;

  private final SessionManager sessions;
  private final SessionSteps steps;

  public ContextCalls(SessionManager sessions, SessionSteps steps) {
    this.sessions = sessions;
    this.steps = steps;
  }

  public ContextSnapshot get(String tenant, String sessionId, List<String> names) {
    ObjectNode payload = Json.mapper().createObjectNode();
    if (names != null) {
      names.forEach(n -> RequestValidator.validateName(n));
      payload.set("names", Json.mapper().valueToTree(names));
    }
    JsonNode frame = call(tenant, sessionId, "get_context", payload, s -> {});
    @SuppressWarnings("unchecked")
    Map<String, Object> variables = Json.mapper().convertValue(frame.path("variables"), Map.class);
    List<String> missing = new ArrayList<>();
    frame.path("missing").forEach(n -> missing.add(n.asText()));
    return new ContextSnapshot(sessionId, variables, missing);
  }

  public ContextSnapshot set(String tenant, String sessionId, Map<String, Object> values) {
    RequestValidator.contextValues(values);
    ObjectNode payload = Json.mapper().createObjectNode();
    payload.set("values", Json.mapper().valueToTree(values));
    call(tenant, sessionId, "set_context", payload, s -> steps.setContext(s, values));
    return get(tenant, sessionId, List.copyOf(values.keySet()));
  }

  public SessionInfo clear(String tenant, String sessionId) {
    call(tenant, sessionId, "clear_context", Json.mapper().createObjectNode(), steps::clearContext);
    return sessions.require(new SessionKey(tenant, sessionId)).info();
  }

  /**
   * @param done told under the session's lock when the runner did it (to record it as a step)
   */
  private JsonNode call(
      String tenant,
      String sessionId,
      String op,
      ObjectNode payload,
      java.util.function.Consumer<Session> done) {
    Ids.requireSessionId(sessionId);
    Session s = sessions.require(new SessionKey(tenant, sessionId));
    return sessions.with(
        s,
        sandbox -> {
          try {
            WorkerReply r =
                sandbox.worker().request(op, payload).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            if (!"ok".equals(r.frame().path("status").asText())) {
              throw PysandboxException.invalid(
                  op + " failed: " + r.frame().path("error").path("value").asText("unknown error"));
            }
            done.accept(s);
            return r.frame();
          } catch (IllegalStateException e) {
            sessions.markDead(s, "exited: " + e.getMessage());
            throw SessionUse.dead(s);
          } catch (ExecutionException e) {
            if (e.getCause() instanceof WorkerLostException lost) {
              sessions.markDead(s, "exited: during " + op + ", " + lost.getMessage());
              throw SessionUse.dead(s);
            }
            throw new PysandboxException(ErrorCode.INTERNAL, op + " failed: " + e.getCause(), e);
          } catch (TimeoutException e) {
            sessions.markDead(
                s, "killed: " + op + " did not answer within " + TIMEOUT_SECONDS + " s");
            throw SessionUse.dead(s);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PysandboxException(ErrorCode.INTERNAL, "interrupted", e);
          }
        });
  }
}
