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

  /** Mutable builder; not thread-safe. Its fields and setters are {@link RunRecordFields}. */
  public static final class Builder extends RunRecordFields<Builder> {
    Builder() {}

    @Override
    Builder self() {
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
