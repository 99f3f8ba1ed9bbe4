package dev.pysandbox.mcp;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The MCP sessions whose client set a logging level ({@code logging/setLevel}): only they get a
 * run's output lines as {@code notifications/message}, filtered by the level they set (the SDK
 * keeps the level; it cannot say whether a client ever set one). The transports record the request
 * as it passes; the newest 100,000 sessions are remembered.
 */
final class LoggingAsked {
  private static final int MAX_SESSIONS = 100_000;
  static final String METHOD = "logging/setLevel";

  private final Map<String, Boolean> sessions =
      Collections.synchronizedMap(
          new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
              return size() > MAX_SESSIONS;
            }
          });

  /** The transport saw {@code method} from the session {@code sessionId}. */
  void saw(String sessionId, String method) {
    if (sessionId != null && METHOD.equals(method)) {
      sessions.put(sessionId, Boolean.TRUE);
    }
  }

  boolean asked(String sessionId) {
    return sessionId != null && sessions.containsKey(sessionId);
  }

  void forget(String sessionId) {
    if (sessionId != null) {
      sessions.remove(sessionId);
    }
  }
}
