package dev.pysandbox.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SessionInfo;
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
final class ContextCalls {
  private static final long TIMEOUT_SECONDS = 30;

  private final SessionManager sessions;

  ContextCalls(SessionManager sessions) {
    this.sessions = sessions;
  }

  ContextSnapshot get(String tenant, String sessionId, List<String> names) {
    ObjectNode payload = Json.mapper().createObjectNode();
    if (names != null) {
      names.forEach(n -> RequestValidator.validateName(n));
      payload.set("names", Json.mapper().valueToTree(names));
    }
    JsonNode frame = call(tenant, sessionId, "get_context", payload);
    @SuppressWarnings("unchecked")
    Map<String, Object> variables = Json.mapper().convertValue(frame.path("variables"), Map.class);
    List<String> missing = new ArrayList<>();
    frame.path("missing").forEach(n -> missing.add(n.asText()));
    return new ContextSnapshot(sessionId, variables, missing);
  }

  ContextSnapshot set(String tenant, String sessionId, Map<String, Object> values) {
    RequestValidator.contextValues(values);
    ObjectNode payload = Json.mapper().createObjectNode();
    payload.set("values", Json.mapper().valueToTree(values));
    call(tenant, sessionId, "set_context", payload);
    return get(tenant, sessionId, List.copyOf(values.keySet()));
  }

  SessionInfo clear(String tenant, String sessionId) {
    call(tenant, sessionId, "clear_context", Json.mapper().createObjectNode());
    return sessions.require(new SessionKey(tenant, sessionId)).info();
  }

  private JsonNode call(String tenant, String sessionId, String op, ObjectNode payload) {
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
            return r.frame();
          } catch (IllegalStateException e) {
            sessions.markDead(s, "exited: " + e.getMessage());
            throw SessionManager.dead(s);
          } catch (ExecutionException e) {
            if (e.getCause() instanceof WorkerLostException lost) {
              sessions.markDead(s, "exited: during " + op + ", " + lost.getMessage());
              throw SessionManager.dead(s);
            }
            throw new PysandboxException(ErrorCode.INTERNAL, op + " failed: " + e.getCause(), e);
          } catch (TimeoutException e) {
            sessions.markDead(
                s, "killed: " + op + " did not answer within " + TIMEOUT_SECONDS + " s");
            throw SessionManager.dead(s);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PysandboxException(ErrorCode.INTERNAL, "interrupted", e);
          }
        });
  }
}
