package dev.pysandbox.api;

import java.util.List;
import java.util.Map;

/**
 * The fields of a {@link RunRecord} being built and their setters: the body of {@link
 * RunRecord.Builder}, apart so that the record stays the wire shape it is. Mutable; not
 * thread-safe.
 *
 * @param <B> the builder, which each setter returns for chaining
 */
public abstract class RunRecordFields<B extends RunRecordFields<B>> {
  String runId;
  String sessionId;
  String parentRunId;
  String description;
  RunStatus status;
  String message;
  KillReason killReason;
  String code;
  String codeHash;
  String stdout;
  String stderr;
  boolean stdoutTruncated;
  boolean stderrTruncated;
  long stdoutBytes;
  long stderrBytes;
  Integer exitCode;
  ErrorInfo error;
  Map<String, Object> result;
  List<Map<String, Object>> displays;
  Map<String, Object> outputs;
  List<String> outputsNonJson;
  List<Artifact> artifacts;
  String artifactsDir;
  int timeoutSeconds;
  Map<String, Object> limits;
  String tier;
  Long peakMemoryBytes;
  Long cpuMillis;
  String backend;
  String createdAt;
  String finishedAt;
  Long durationMs;
  List<RiskFinding> riskFindings;
  String approvalId;
  String interpreter;
  String envHash;
  List<String> packages;
  String environment;
  String pipFreeze;
  String serverVersion;
  String recordSha256;
  String notebookSource;
  String notebookIpynbPath;
  String notebookPyPath;
  String requestId;
  String tenant;
  String viewCommand;

  RunRecordFields() {}

  /** This builder, as its own type. */
  abstract B self();

  public B runId(String runId) {
    this.runId = runId;
    return self();
  }

  public B sessionId(String sessionId) {
    this.sessionId = sessionId;
    return self();
  }

  public B parentRunId(String parentRunId) {
    this.parentRunId = parentRunId;
    return self();
  }

  public B description(String description) {
    this.description = description;
    return self();
  }

  public B status(RunStatus status) {
    this.status = status;
    return self();
  }

  public B message(String message) {
    this.message = message;
    return self();
  }

  public B killReason(KillReason killReason) {
    this.killReason = killReason;
    return self();
  }

  public B code(String code) {
    this.code = code;
    return self();
  }

  public B codeHash(String codeHash) {
    this.codeHash = codeHash;
    return self();
  }

  public B stdout(String stdout) {
    this.stdout = stdout;
    return self();
  }

  public B stderr(String stderr) {
    this.stderr = stderr;
    return self();
  }

  public B stdoutTruncated(boolean stdoutTruncated) {
    this.stdoutTruncated = stdoutTruncated;
    return self();
  }

  public B stderrTruncated(boolean stderrTruncated) {
    this.stderrTruncated = stderrTruncated;
    return self();
  }

  public B stdoutBytes(long stdoutBytes) {
    this.stdoutBytes = stdoutBytes;
    return self();
  }

  public B stderrBytes(long stderrBytes) {
    this.stderrBytes = stderrBytes;
    return self();
  }

  public B exitCode(Integer exitCode) {
    this.exitCode = exitCode;
    return self();
  }

  public B error(ErrorInfo error) {
    this.error = error;
    return self();
  }

  public B result(Map<String, Object> result) {
    this.result = result;
    return self();
  }

  public B displays(List<Map<String, Object>> displays) {
    this.displays = displays;
    return self();
  }

  public B outputs(Map<String, Object> outputs) {
    this.outputs = outputs;
    return self();
  }

  public B outputsNonJson(List<String> outputsNonJson) {
    this.outputsNonJson = outputsNonJson;
    return self();
  }

  public B artifacts(List<Artifact> artifacts) {
    this.artifacts = artifacts;
    return self();
  }

  public B artifactsDir(String artifactsDir) {
    this.artifactsDir = artifactsDir;
    return self();
  }

  public B timeoutSeconds(int timeoutSeconds) {
    this.timeoutSeconds = timeoutSeconds;
    return self();
  }

  public B limits(Map<String, Object> limits) {
    this.limits = limits;
    return self();
  }

  public B tier(String tier) {
    this.tier = tier;
    return self();
  }

  public B peakMemoryBytes(Long peakMemoryBytes) {
    this.peakMemoryBytes = peakMemoryBytes;
    return self();
  }

  public B cpuMillis(Long cpuMillis) {
    this.cpuMillis = cpuMillis;
    return self();
  }

  public B backend(String backend) {
    this.backend = backend;
    return self();
  }

  public B createdAt(String createdAt) {
    this.createdAt = createdAt;
    return self();
  }

  public B finishedAt(String finishedAt) {
    this.finishedAt = finishedAt;
    return self();
  }

  public B durationMs(Long durationMs) {
    this.durationMs = durationMs;
    return self();
  }

  public B riskFindings(List<RiskFinding> riskFindings) {
    this.riskFindings = riskFindings;
    return self();
  }

  public B approvalId(String approvalId) {
    this.approvalId = approvalId;
    return self();
  }

  public B interpreter(String interpreter) {
    this.interpreter = interpreter;
    return self();
  }

  public B envHash(String envHash) {
    this.envHash = envHash;
    return self();
  }

  public B packages(List<String> packages) {
    this.packages = packages;
    return self();
  }

  public B environment(String environment) {
    this.environment = environment;
    return self();
  }

  public B pipFreeze(String pipFreeze) {
    this.pipFreeze = pipFreeze;
    return self();
  }

  public B serverVersion(String serverVersion) {
    this.serverVersion = serverVersion;
    return self();
  }

  public B recordSha256(String recordSha256) {
    this.recordSha256 = recordSha256;
    return self();
  }

  public B notebookSource(String notebookSource) {
    this.notebookSource = notebookSource;
    return self();
  }

  public B notebookIpynbPath(String notebookIpynbPath) {
    this.notebookIpynbPath = notebookIpynbPath;
    return self();
  }

  public B notebookPyPath(String notebookPyPath) {
    this.notebookPyPath = notebookPyPath;
    return self();
  }

  public B viewCommand(String viewCommand) {
    this.viewCommand = viewCommand;
    return self();
  }

  public B requestId(String requestId) {
    this.requestId = requestId;
    return self();
  }

  public B tenant(String tenant) {
    this.tenant = tenant;
    return self();
  }
}
