package dev.pysandbox.core.sessions;

import dev.pysandbox.api.SessionStep;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.TimeSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records what changed a session's state besides its runs (globals set or cleared, files put into
 * its workspace) as steps of the session, so that its exported notebook re-runs. Called under the
 * session's lock, so a step stands exactly between the runs around it ({@link
 * SessionStep#afterRunId()}). A step that cannot be written is logged: the call it records has
 * already happened.
 */
public final class SessionSteps {
  private static final Logger log = LoggerFactory.getLogger(SessionSteps.class);

  private final Supplier<RunStore> store;
  private final TimeSource time;

  public SessionSteps(Supplier<RunStore> store, TimeSource time) {
    this.store = store;
    this.time = time;
  }

  void setContext(Session s, Map<String, Object> values) {
    record(s, SessionStep.SET_CONTEXT, Map.of("values", values));
  }

  void clearContext(Session s) {
    record(s, SessionStep.CLEAR_CONTEXT, Map.of());
  }

  /**
   * A file put into the workspace.
   *
   * @param url where a download came from, or {@code null} for an upload
   */
  public void file(Session s, String path, long sizeBytes, String sha256, String url) {
    Map<String, Object> detail = new LinkedHashMap<>();
    detail.put("path", path);
    detail.put("size_bytes", sizeBytes);
    detail.put("sha256", sha256);
    if (url != null) {
      detail.put("url", url);
    }
    record(s, url == null ? SessionStep.UPLOAD_FILE : SessionStep.DOWNLOAD_FILE, detail);
  }

  private void record(Session s, String kind, Map<String, Object> detail) {
    try {
      store
          .get()
          .recordSessionStep(
              s.tenant,
              s.id,
              new SessionStep(kind, time.instant().toString(), s.lastRunId(), detail));
    } catch (RuntimeException e) {
      log.warn(
          "session {}: its {} could not be recorded (its notebook will lack it): {}",
          s.key(),
          kind,
          e.getMessage());
    }
  }
}
