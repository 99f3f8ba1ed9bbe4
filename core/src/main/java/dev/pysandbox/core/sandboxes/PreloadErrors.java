package dev.pysandbox.core.sandboxes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.backend.Sandbox;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the runner's ready frame says of {@code pool_preload}: the modules it could not import, by
 * module. The sandbox still works, so this is no failed start; the {@link WarmPool} keeps the last
 * set for check_setup and logs each distinct set once.
 */
final class PreloadErrors {
  private final Set<String> reported = ConcurrentHashMap.newKeySet();
  private volatile Map<String, String> last = Map.of();

  /** From the last sandbox that reported any; empty when all imported. */
  Map<String, String> last() {
    return last;
  }

  /**
   * Reads the sandbox's ready frame.
   *
   * @return the errors it reports when this set was not seen before (to be logged), else {@code
   *     null}
   */
  Map<String, String> note(Sandbox sandbox) {
    ObjectNode ready = sandbox.worker().ready().getNow(null);
    JsonNode errors = ready == null ? null : ready.get("preload_errors");
    if (errors == null || !errors.isObject() || errors.isEmpty()) {
      return null;
    }
    Map<String, String> found = new TreeMap<>();
    errors.properties().forEach(e -> found.put(e.getKey(), e.getValue().asText()));
    last = Map.copyOf(found);
    return reported.add(found.toString()) ? found : null;
  }
}
