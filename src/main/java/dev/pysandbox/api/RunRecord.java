package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * A run: one execution of code, as recorded and as returned by {@code run_python} and {@code
 * get_run}. The server, not the sandbox, sets status, timings, resource use and artifacts. (A value
 * record with a builder: one coherent thing, long because the wire shape is.)
 *
 * @param runId run id, {@code run_} and 20 hex digits
 * @param sessionId session it ran in; {@code null} for one-shot runs
 * @param parentRunId the run this one re-ran, or {@code null}
 * @param description caller's free text, data only
 * @param status where the run is in its life
 * @param message why it ended this way, for statuses other than succeeded (limit, elapsed time,
 *     exit code); in a session, also how many bytes of output arrived between runs (they lead this
 *     run's stdout and stderr), when some did
 * @param killReason when a limit stopped it: {@code timeout}, {@code memory_limit}, {@code
 *     pids_limit}, {@code disk_quota} or {@code output_limit}; {@code protocol_violation} when its
 *     sandbox broke the worker protocol and was killed; else {@code null}
 * @param code the source that ran (omitted when not asked for)
 * @param codeHash sha256 of the code's UTF-8 bytes
 * @param stdout captured standard output (head and tail when truncated)
 * @param stderr captured standard error (head and tail when truncated)
 * @param stdoutTruncated true when stdout exceeded the cap
 * @param stderrTruncated true when stderr exceeded the cap
 * @param stdoutBytes total stdout bytes produced, kept or not
 * @param stderrBytes total stderr bytes produced, kept or not
 * @param exitCode 0 on success, 1 for an exception, the code of {@code sys.exit(n)} or of a process
 *     that exited; {@code null} when killed
 * @param error the exception, or {@code null}
 * @param result MIME bundle of the trailing expression, or {@code null}
 * @param displays MIME bundles from {@code display()} and matplotlib figures
 * @param outputs the {@code __outputs__} dict; values that are not JSON are given as repr and type
 * @param outputsNonJson keys of {@code outputs} whose values were not JSON
 * @param artifacts workspace files created, changed or deleted, measured by the server
 * @param artifactsDir host directory holding this run's files, or {@code null}; a host path, so
 *     never on the wire (the CLI on the host shows it)
 * @param timeoutSeconds the wall-clock limit applied
 * @param limits the resource limits applied (memory, processes, CPU, disk)
 * @param tier the tier its sandbox had (a session's is the session's); {@code null} for runs
 *     recorded before tiers
 * @param peakMemoryBytes peak memory of the sandbox during the run, measured by the server
 *     (cgroup), or {@code null}
 * @param cpuMillis CPU time the sandbox used during the run, measured by the server (cgroup), or
 *     {@code null}
 * @param backend the sandbox backend that ran it
 * @param createdAt ISO-8601 instant the run was recorded
 * @param finishedAt ISO-8601 instant it finished, or {@code null}
 * @param durationMs wall time of the execution measured by the server, or {@code null}
 * @param riskFindings findings of the risk analysis (empty until it runs)
 * @param approvalId the approval the run waited (or waits) for, or {@code null}
 * @param interpreter the version of the Python that ran it ({@code 3.11.2}), or {@code null}
 * @param envHash sha256 of the sorted {@code name==version} list of the distributions its sandbox
 *     saw, or {@code null}
 * @param packages the packages the run asked for (its own, its session's and its code's PEP 723
 *     metadata), as canonical PEP 508 requirements; empty for none
 * @param environment the key (content hash) of the package environment its sandbox had, or {@code
 *     null}
 * @param pipFreeze {@code pip freeze} of that environment, or {@code null}
 * @param serverVersion the pysandbox version that ran it
 * @param recordSha256 the run's link in the store's hash chain (see {@code pysandbox runs verify}),
 *     set shortly after it finished; {@code null} until then
 * @param notebookSource the run's notebook as marimo's .py text, only when asked for
 * @param notebookIpynbPath the host path of the run's .ipynb notebook, only when asked for
 * @param notebookPyPath the host path of the run's marimo .py notebook, only when asked for
 * @param viewCommand a command that shows this run
 * @param requestId the id of the HTTP request that started the run ({@code X-Request-Id}), or
 *     {@code null} (stdio, CLI)
 * @param tenant the tenant that owns the run ({@link Tenants}); never on the wire (a caller sees
 *     only its own runs)
 */
public record RunRecord(
    String runId,
    String sessionId,
    String parentRunId,
    String description,
    RunStatus status,
    String message,
    KillReason killReason,
    String code,
    String codeHash,
    String stdout,
    String stderr,
    boolean stdoutTruncated,
    boolean stderrTruncated,
    long stdoutBytes,
    long stderrBytes,
    Integer exitCode,
    ErrorInfo error,
    Map<String, Object> result,
    List<Map<String, Object>> displays,
    Map<String, Object> outputs,
    List<String> outputsNonJson,
    List<Artifact> artifacts,
    @JsonIgnore String artifactsDir,
    int timeoutSeconds,
    Map<String, Object> limits,
    String tier,
    Long peakMemoryBytes,
    Long cpuMillis,
    String backend,
    String createdAt,
    String finishedAt,
    Long durationMs,
    List<RiskFinding> riskFindings,
    String approvalId,
    String interpreter,
    String envHash,
    List<String> packages,
    String environment,
    String pipFreeze,
    String serverVersion,
    String recordSha256,
    @JsonInclude(JsonInclude.Include.NON_NULL) String notebookSource,
    @JsonInclude(JsonInclude.Include.NON_NULL) String notebookIpynbPath,
    @JsonInclude(JsonInclude.Include.NON_NULL) String notebookPyPath,
    String viewCommand,
    String requestId,
    @JsonIgnore String tenant) {

  public RunRecord {
    displays = displays == null ? List.of() : List.copyOf(displays);
    artifacts = artifacts == null ? List.of() : List.copyOf(artifacts);
    outputs = outputs == null ? Map.of() : outputs;
    outputsNonJson = outputsNonJson == null ? List.of() : List.copyOf(outputsNonJson);
    riskFindings = riskFindings == null ? List.of() : List.copyOf(riskFindings);
    packages = packages == null ? List.of() : List.copyOf(packages);
    limits = limits == null ? Map.of() : limits;
  }

  /**
   * Which fields the server measured from outside the sandbox, and which the code's own process
   * reported. Code in a session can replace the runner's functions and so forge the second kind for
   * its later runs; the first kind it cannot touch. A timeout, a kill or a limit is always the
   * server's: only {@code succeeded} versus an exception ({@code failed}) comes from the runner.
   */
  public static final Map<String, List<String>> PROVENANCE =
      Map.of(
          "measured_by_server",
          List.of(
              "status (timed_out, cancelled, interrupted, kill_reason, limits, tier)",
              "stdout",
              "stderr",
              "stdout_bytes",
              "stderr_bytes",
              "artifacts",
              "duration_ms",
              "peak_memory_bytes",
              "cpu_millis",
              "code_hash",
              "created_at",
              "finished_at"),
          "reported_from_inside_the_sandbox",
          List.of(
              "status (succeeded or failed)",
              "exit_code",
              "error",
              "result",
              "displays",
              "outputs",
              "outputs_non_json"));

  /** {@link #PROVENANCE}, in every record on the wire. */
  @JsonProperty("provenance")
  public Map<String, List<String>> provenance() {
    return PROVENANCE;
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.runId = runId;
    b.sessionId = sessionId;
    b.parentRunId = parentRunId;
    b.description = description;
    b.status = status;
    b.message = message;
    b.killReason = killReason;
    b.code = code;
    b.codeHash = codeHash;
    b.stdout = stdout;
    b.stderr = stderr;
    b.stdoutTruncated = stdoutTruncated;
    b.stderrTruncated = stderrTruncated;
    b.stdoutBytes = stdoutBytes;
    b.stderrBytes = stderrBytes;
    b.exitCode = exitCode;
    b.error = error;
    b.result = result;
    b.displays = displays;
    b.outputs = outputs;
    b.outputsNonJson = outputsNonJson;
    b.artifacts = artifacts;
    b.artifactsDir = artifactsDir;
    b.timeoutSeconds = timeoutSeconds;
    b.limits = limits;
    b.tier = tier;
    b.peakMemoryBytes = peakMemoryBytes;
    b.cpuMillis = cpuMillis;
    b.backend = backend;
    b.createdAt = createdAt;
    b.finishedAt = finishedAt;
    b.durationMs = durationMs;
    b.riskFindings = riskFindings;
    b.approvalId = approvalId;
    b.interpreter = interpreter;
    b.envHash = envHash;
    b.packages = packages;
    b.environment = environment;
    b.pipFreeze = pipFreeze;
    b.serverVersion = serverVersion;
    b.recordSha256 = recordSha256;
    b.notebookSource = notebookSource;
    b.notebookIpynbPath = notebookIpynbPath;
    b.notebookPyPath = notebookPyPath;
    b.viewCommand = viewCommand;
    b.requestId = requestId;
    b.tenant = tenant;
    return b;
  }

  /** Mutable builder; not thread-safe. */
  public static final class Builder {
    private String runId;
    private String sessionId;
    private String parentRunId;
    private String description;
    private RunStatus status;
    private String message;
    private KillReason killReason;
    private String code;
    private String codeHash;
    private String stdout;
    private String stderr;
    private boolean stdoutTruncated;
    private boolean stderrTruncated;
    private long stdoutBytes;
    private long stderrBytes;
    private Integer exitCode;
    private ErrorInfo error;
    private Map<String, Object> result;
    private List<Map<String, Object>> displays;
    private Map<String, Object> outputs;
    private List<String> outputsNonJson;
    private List<Artifact> artifacts;
    private String artifactsDir;
    private int timeoutSeconds;
    private Map<String, Object> limits;
    private String tier;
    private Long peakMemoryBytes;
    private Long cpuMillis;
    private String backend;
    private String createdAt;
    private String finishedAt;
    private Long durationMs;
    private List<RiskFinding> riskFindings;
    private String approvalId;
    private String interpreter;
    private String envHash;
    private List<String> packages;
    private String environment;
    private String pipFreeze;
    private String serverVersion;
    private String recordSha256;
    private String notebookSource;
    private String notebookIpynbPath;
    private String notebookPyPath;
    private String requestId;
    private String tenant;
    private String viewCommand;

    private Builder() {}

    public Builder runId(String runId) {
      this.runId = runId;
      return this;
    }

    public Builder sessionId(String sessionId) {
      this.sessionId = sessionId;
      return this;
    }

    public Builder parentRunId(String parentRunId) {
      this.parentRunId = parentRunId;
      return this;
    }

    public Builder description(String description) {
      this.description = description;
      return this;
    }

    public Builder status(RunStatus status) {
      this.status = status;
      return this;
    }

    public Builder message(String message) {
      this.message = message;
      return this;
    }

    public Builder killReason(KillReason killReason) {
      this.killReason = killReason;
      return this;
    }

    public Builder code(String code) {
      this.code = code;
      return this;
    }

    public Builder codeHash(String codeHash) {
      this.codeHash = codeHash;
      return this;
    }

    public Builder stdout(String stdout) {
      this.stdout = stdout;
      return this;
    }

    public Builder stderr(String stderr) {
      this.stderr = stderr;
      return this;
    }

    public Builder stdoutTruncated(boolean stdoutTruncated) {
      this.stdoutTruncated = stdoutTruncated;
      return this;
    }

    public Builder stderrTruncated(boolean stderrTruncated) {
      this.stderrTruncated = stderrTruncated;
      return this;
    }

    public Builder stdoutBytes(long stdoutBytes) {
      this.stdoutBytes = stdoutBytes;
      return this;
    }

    public Builder stderrBytes(long stderrBytes) {
      this.stderrBytes = stderrBytes;
      return this;
    }

    public Builder exitCode(Integer exitCode) {
      this.exitCode = exitCode;
      return this;
    }

    public Builder error(ErrorInfo error) {
      this.error = error;
      return this;
    }

    public Builder result(Map<String, Object> result) {
      this.result = result;
      return this;
    }

    public Builder displays(List<Map<String, Object>> displays) {
      this.displays = displays;
      return this;
    }

    public Builder outputs(Map<String, Object> outputs) {
      this.outputs = outputs;
      return this;
    }

    public Builder outputsNonJson(List<String> outputsNonJson) {
      this.outputsNonJson = outputsNonJson;
      return this;
    }

    public Builder artifacts(List<Artifact> artifacts) {
      this.artifacts = artifacts;
      return this;
    }

    public Builder artifactsDir(String artifactsDir) {
      this.artifactsDir = artifactsDir;
      return this;
    }

    public Builder timeoutSeconds(int timeoutSeconds) {
      this.timeoutSeconds = timeoutSeconds;
      return this;
    }

    public Builder limits(Map<String, Object> limits) {
      this.limits = limits;
      return this;
    }

    public Builder tier(String tier) {
      this.tier = tier;
      return this;
    }

    public Builder peakMemoryBytes(Long peakMemoryBytes) {
      this.peakMemoryBytes = peakMemoryBytes;
      return this;
    }

    public Builder cpuMillis(Long cpuMillis) {
      this.cpuMillis = cpuMillis;
      return this;
    }

    public Builder backend(String backend) {
      this.backend = backend;
      return this;
    }

    public Builder createdAt(String createdAt) {
      this.createdAt = createdAt;
      return this;
    }

    public Builder finishedAt(String finishedAt) {
      this.finishedAt = finishedAt;
      return this;
    }

    public Builder durationMs(Long durationMs) {
      this.durationMs = durationMs;
      return this;
    }

    public Builder riskFindings(List<RiskFinding> riskFindings) {
      this.riskFindings = riskFindings;
      return this;
    }

    public Builder approvalId(String approvalId) {
      this.approvalId = approvalId;
      return this;
    }

    public Builder interpreter(String interpreter) {
      this.interpreter = interpreter;
      return this;
    }

    public Builder envHash(String envHash) {
      this.envHash = envHash;
      return this;
    }

    /** The packages asked for (canonical requirements), empty for none. */
    public Builder packages(List<String> packages) {
      this.packages = packages;
      return this;
    }

    /** The package environment's key, or {@code null}. */
    public Builder environment(String environment) {
      this.environment = environment;
      return this;
    }

    /** {@code pip freeze} of the package environment, or {@code null}. */
    public Builder pipFreeze(String pipFreeze) {
      this.pipFreeze = pipFreeze;
      return this;
    }

    public Builder serverVersion(String serverVersion) {
      this.serverVersion = serverVersion;
      return this;
    }

    public Builder recordSha256(String recordSha256) {
      this.recordSha256 = recordSha256;
      return this;
    }

    public Builder notebookSource(String notebookSource) {
      this.notebookSource = notebookSource;
      return this;
    }

    public Builder notebookIpynbPath(String notebookIpynbPath) {
      this.notebookIpynbPath = notebookIpynbPath;
      return this;
    }

    public Builder notebookPyPath(String notebookPyPath) {
      this.notebookPyPath = notebookPyPath;
      return this;
    }

    public Builder viewCommand(String viewCommand) {
      this.viewCommand = viewCommand;
      return this;
    }

    public Builder requestId(String requestId) {
      this.requestId = requestId;
      return this;
    }

    public Builder tenant(String tenant) {
      this.tenant = tenant;
      return this;
    }

    public RunRecord build() {
      return new RunRecord(
          runId,
          sessionId,
          parentRunId,
          description,
          status,
          message,
          killReason,
          code,
          codeHash,
          stdout,
          stderr,
          stdoutTruncated,
          stderrTruncated,
          stdoutBytes,
          stderrBytes,
          exitCode,
          error,
          result,
          displays,
          outputs,
          outputsNonJson,
          artifacts,
          artifactsDir,
          timeoutSeconds,
          limits,
          tier,
          peakMemoryBytes,
          cpuMillis,
          backend,
          createdAt,
          finishedAt,
          durationMs,
          riskFindings,
          approvalId,
          interpreter,
          envHash,
          packages,
          environment,
          pipFreeze,
          serverVersion,
          recordSha256,
          notebookSource,
          notebookIpynbPath,
          notebookPyPath,
          viewCommand,
          requestId,
          tenant);
    }
  }
}
