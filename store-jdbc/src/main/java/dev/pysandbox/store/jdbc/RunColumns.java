package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.getInt;
import static dev.pysandbox.store.jdbc.ColumnValues.getLong;
import static dev.pysandbox.store.jdbc.ColumnValues.json;
import static dev.pysandbox.store.jdbc.ColumnValues.parse;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.RunSummary;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.api.WireEnum;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The {@code runs} table's columns: how a {@link RunRecord} is inserted, and the one row mapper
 * each for a whole {@link RunRecord} and for a {@link RunSummary}. Shared by {@link RunRows} and
 * {@link ApprovalRows} (a held run is inserted with its approval, in one transaction).
 */
final class RunColumns {
  /** A run that has ended, whatever way: only these are sealed, purged or deleted. */
  static final String FINAL = " status NOT IN ('pending','awaiting_approval','running')";

  static final String SUMMARY =
      "id, tenant, session_id, status, description, substr(code, 1, 200) AS code_head,"
          + " code_hash, created_at, duration_ms, exit_code, error_name";

  static final String INSERT =
      "INSERT INTO runs (id, session_id, parent_run_id, instance_id, description, status, code,"
          + " code_hash, timeout_seconds, backend, created_at, limits_json, tenant, request_id,"
          + " interpreter, env_hash, server_version, approval_id, risk_findings_json, tier,"
          + " packages_json, environment, pip_freeze, message)"
          + " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

  private RunColumns() {}

  /** Binds {@link #INSERT}'s parameters. */
  static void bindInsert(PreparedStatement ps, RunRecord run, String instanceId)
      throws SQLException {
    ps.setString(1, run.runId());
    ps.setString(2, run.sessionId());
    ps.setString(3, run.parentRunId());
    ps.setString(4, instanceId);
    ps.setString(5, run.description());
    ps.setString(6, run.status().wireName());
    ps.setString(7, run.code());
    ps.setString(8, run.codeHash());
    ps.setInt(9, run.timeoutSeconds());
    ps.setString(10, run.backend());
    ps.setLong(11, Instant.parse(run.createdAt()).toEpochMilli());
    ps.setString(12, run.limits().isEmpty() ? null : json(run.limits()));
    ps.setString(13, run.tenant() == null ? Tenants.LOCAL : run.tenant());
    ps.setString(14, run.requestId());
    ps.setString(15, run.interpreter());
    ps.setString(16, run.envHash());
    ps.setString(17, run.serverVersion());
    ps.setString(18, run.approvalId());
    ps.setString(19, run.riskFindings().isEmpty() ? null : json(run.riskFindings()));
    ps.setString(20, run.tier());
    ps.setString(21, run.packages().isEmpty() ? null : json(run.packages()));
    ps.setString(22, run.environment());
    ps.setString(23, run.pipFreeze());
    ps.setString(24, run.message()); // a held run's says who decides it and how to wait
  }

  /** A row of {@link #SUMMARY}; the tenant only when listing across tenants. */
  static RunSummary summary(ResultSet rs, boolean withTenant) throws SQLException {
    String head = rs.getString("code_head");
    String firstLine = head == null ? "" : head.strip().lines().findFirst().orElse("");
    if (firstLine.length() > 80) {
      firstLine = firstLine.substring(0, 77) + "...";
    }
    return new RunSummary(
        rs.getString("id"),
        rs.getString("session_id"),
        WireEnum.parse(RunStatus.class, rs.getString("status")),
        rs.getString("description"),
        firstLine,
        rs.getString("code_hash"),
        Instant.ofEpochMilli(rs.getLong("created_at")).toString(),
        getLong(rs, "duration_ms"),
        getInt(rs, "exit_code"),
        rs.getString("error_name"),
        withTenant ? rs.getString("tenant") : null);
  }

  /** A whole row ({@code SELECT *}); the code only when asked for. */
  static RunRecord full(ResultSet rs, boolean includeCode) throws SQLException {
    Map<String, Object> outputs = parse(rs.getString("outputs_json"), new TypeReference<>() {});
    @SuppressWarnings("unchecked")
    Map<String, Object> values =
        outputs == null ? Map.of() : (Map<String, Object>) outputs.getOrDefault("values", Map.of());
    @SuppressWarnings("unchecked")
    List<String> nonJson =
        outputs == null ? List.of() : (List<String>) outputs.getOrDefault("non_json", List.of());
    Long finished = getLong(rs, "finished_at");
    String killReason = rs.getString("kill_reason");
    return RunRecord.builder()
        .runId(rs.getString("id"))
        .tenant(rs.getString("tenant"))
        .requestId(rs.getString("request_id"))
        .interpreter(rs.getString("interpreter"))
        .envHash(rs.getString("env_hash"))
        .serverVersion(rs.getString("server_version"))
        .recordSha256(rs.getString("record_sha256"))
        .approvalId(rs.getString("approval_id"))
        .riskFindings(
            parse(rs.getString("risk_findings_json"), new TypeReference<List<RiskFinding>>() {}))
        .sessionId(rs.getString("session_id"))
        .parentRunId(rs.getString("parent_run_id"))
        .description(rs.getString("description"))
        .status(WireEnum.parse(RunStatus.class, rs.getString("status")))
        .message(rs.getString("message"))
        .killReason(killReason == null ? null : WireEnum.parse(KillReason.class, killReason))
        .limits(parse(rs.getString("limits_json"), new TypeReference<Map<String, Object>>() {}))
        .tier(rs.getString("tier"))
        .packages(parse(rs.getString("packages_json"), new TypeReference<List<String>>() {}))
        .environment(rs.getString("environment"))
        .pipFreeze(rs.getString("pip_freeze"))
        .peakMemoryBytes(getLong(rs, "peak_memory_bytes"))
        .cpuMillis(getLong(rs, "cpu_millis"))
        .code(includeCode ? rs.getString("code") : null)
        .codeHash(rs.getString("code_hash"))
        .stdout(rs.getString("stdout"))
        .stderr(rs.getString("stderr"))
        .stdoutTruncated(rs.getInt("stdout_truncated") != 0)
        .stderrTruncated(rs.getInt("stderr_truncated") != 0)
        .stdoutBytes(rs.getLong("stdout_bytes"))
        .stderrBytes(rs.getLong("stderr_bytes"))
        .exitCode(getInt(rs, "exit_code"))
        .error(parse(rs.getString("error_json"), new TypeReference<ErrorInfo>() {}))
        .result(parse(rs.getString("result_json"), new TypeReference<Map<String, Object>>() {}))
        .displays(
            parse(rs.getString("displays_json"), new TypeReference<List<Map<String, Object>>>() {}))
        .outputs(values)
        .outputsNonJson(nonJson)
        .artifacts(parse(rs.getString("artifacts_json"), new TypeReference<List<Artifact>>() {}))
        .artifactsDir(rs.getString("artifacts_dir"))
        .timeoutSeconds(rs.getInt("timeout_seconds"))
        .backend(rs.getString("backend"))
        .createdAt(Instant.ofEpochMilli(rs.getLong("created_at")).toString())
        .finishedAt(finished == null ? null : Instant.ofEpochMilli(finished).toString())
        .durationMs(getLong(rs, "duration_ms"))
        .build();
  }
}
