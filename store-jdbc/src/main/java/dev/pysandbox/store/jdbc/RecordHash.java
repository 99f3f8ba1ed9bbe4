package dev.pysandbox.store.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.pysandbox.util.Sha256;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A run's link in the hash chain: the sha256 of a canonical JSON text of {@code {"v": 1, "prev":
 * <the previous link>, "record": {<column>: <value>, ...}, "files": {<path>: <sha256>, ...}}}, keys
 * sorted, integers as integers, every other value as the text the store holds (JSON columns
 * included, as stored). The columns are a fixed list per version, so that a column added later does
 * not change the links of runs sealed before it; the host path of a run's files and the server
 * instance that ran it are left out (a data directory may move).
 */
final class RecordHash {
  static final int VERSION = 1;

  /** The link before the first. */
  static final String GENESIS = "0".repeat(64);

  static final List<String> COLUMNS =
      List.of(
          "id",
          "tenant",
          "session_id",
          "parent_run_id",
          "request_id",
          "description",
          "status",
          "message",
          "kill_reason",
          "code",
          "code_hash",
          "stdout",
          "stderr",
          "stdout_truncated",
          "stderr_truncated",
          "stdout_bytes",
          "stderr_bytes",
          "exit_code",
          "error_name",
          "error_json",
          "result_json",
          "displays_json",
          "outputs_json",
          "artifacts_json",
          "timeout_seconds",
          "limits_json",
          "peak_memory_bytes",
          "cpu_millis",
          "backend",
          "interpreter",
          "env_hash",
          "server_version",
          "created_at",
          "finished_at",
          "duration_ms");

  /** Selects the hashed columns of one run by id. */
  static final String SELECT = "SELECT " + String.join(", ", COLUMNS) + " FROM runs WHERE id=?";

  private static final ObjectMapper CANONICAL =
      new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

  private RecordHash() {}

  /** The hashed columns of the current row of {@code rs} (selected with {@link #SELECT}). */
  static Map<String, Object> columns(ResultSet rs) throws SQLException {
    Map<String, Object> out = new TreeMap<>();
    for (String c : COLUMNS) {
      Object v = rs.getObject(c);
      out.put(c, v instanceof Number n ? (Object) n.longValue() : v == null ? null : v.toString());
    }
    return out;
  }

  /**
   * The files a run kept, path to sha256, from its artifacts as stored: created or modified, not
   * skipped. Unreadable artifacts (a record changed by hand) give none; the record's own hash tells
   * that it changed.
   */
  static Map<String, String> keptFiles(String artifactsJson) {
    Map<String, String> out = new TreeMap<>();
    if (artifactsJson == null) {
      return out;
    }
    try {
      for (JsonNode a : CANONICAL.readTree(artifactsJson)) {
        boolean kept =
            !a.path("change").asText("").equals("deleted")
                && (a.path("skipped").isMissingNode() || a.path("skipped").isNull());
        if (kept && a.path("sha256").isTextual() && a.path("path").isTextual()) {
          out.put(a.path("path").asText(), a.path("sha256").asText());
        }
      }
    } catch (JsonProcessingException | RuntimeException e) {
      out.clear();
    }
    return out;
  }

  /** The link of a record whose previous link is {@code prev}. */
  static String link(String prev, Map<String, Object> record) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("v", VERSION);
    doc.put("prev", prev);
    doc.put("record", record);
    doc.put("files", keptFiles((String) record.get("artifacts_json")));
    try {
      return Sha256.hex(CANONICAL.writeValueAsBytes(doc));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write a run record as JSON", e);
    }
  }
}
