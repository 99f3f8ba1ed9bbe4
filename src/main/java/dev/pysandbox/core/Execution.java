package dev.pysandbox.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.ResourceUsage;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxExit;
import dev.pysandbox.util.TimeSource;
import dev.pysandbox.worker.CapturedText;
import dev.pysandbox.worker.WorkerLostException;
import dev.pysandbox.worker.WorkerReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One execution of code in a sandbox with its limits enforced from here: on timeout the whole
 * sandbox is killed and checked, and the run is {@code timed_out} with the limit and the time
 * taken; output and disk are watched while the run is in flight (KeyboardInterrupt first, then a
 * kill), and a run the kernel stopped (memory, processes) is told apart by the sandbox's cgroup
 * counters. A run stopped by a limit carries a {@code kill_reason}. The outcome is classified by
 * the server (succeeded, failed, timed out, lost) and written onto a run record; nothing the code
 * reports decides the status on its own.
 */
final class Execution {
  private static final ObjectMapper JSON = Json.mapper();
  private static final long LOST_GRACE_MILLIS = 2000;

  /**
   * How the execution ended.
   *
   * @param sandboxGone true when the sandbox no longer runs (killed or exited)
   */
  record Outcome(RunRecord.Builder run, boolean sandboxGone) {
    /** Why the sandbox is gone, as a session that dies with it reports it. */
    String deathReason() {
      RunRecord r = run.build();
      if (r.killReason() != null && r.status() != RunStatus.TIMED_OUT) {
        return r.killReason() + ": during run " + r.runId() + ", " + r.message();
      }
      return switch (r.status()) {
        case TIMED_OUT ->
            "timeout: run "
                + r.runId()
                + " passed its "
                + r.timeoutSeconds()
                + " s limit and its sandbox was killed";
        case CANCELLED ->
            "killed: run " + r.runId() + " was cancelled and did not stop on KeyboardInterrupt";
        default -> "exited: during run " + r.runId() + ", " + r.message();
      };
    }
  }

  /**
   * The limits the server enforces while a run is in flight (the kernel enforces memory, processes
   * and CPU by itself).
   *
   * @param outputMaxBytes stdout and stderr together, kept or not
   * @param outputsMaxBytes {@code __outputs__} as JSON ({@code outputs_max_mb})
   * @param workspaceBytesBefore the workspace's size before the run: the quota stops a run that
   *     grows it past the limit, not one that found it already there
   * @param graceMillis after a KeyboardInterrupt for a limit, how long before the sandbox is killed
   */
  record Guard(
      long outputMaxBytes, long outputsMaxBytes, long workspaceBytesBefore, long graceMillis) {}

  /** How often the server looks at output, disk and the cgroup while a run is in flight. */
  static final long POLL_MILLIS = 200;

  private Execution() {}

  /**
   * Runs {@code code} and fills status, output, result and timing into {@code run}. A run whose
   * {@code active} handle was cancelled ends {@code cancelled}, however it stopped.
   */
  static Outcome run(
      ActiveRun active,
      String code,
      int timeoutSeconds,
      Guard guard,
      TimeSource time,
      RunRecord.Builder run) {
    Sandbox sandbox = active.sandbox();
    sandbox.resetPeak();
    ResourceUsage before = sandbox.usage().orElse(null);
    Watch watch = new Watch(sandbox, guard, before, time);
    Outcome o = execute(active, code, timeoutSeconds, guard, watch, time, run);
    measure(watch.latest(), before, run);
    noteIdleOutput(sandbox.worker().idleOutputBytes(), guard, run);
    if (active.interruptedBy() != null && o.sandboxGone()) {
      interrupted(run, active.interruptedBy());
    } else if (active.cancelRequested()) {
      String why = active.cancelReason() == null ? "" : active.cancelReason() + "; ";
      run.status(RunStatus.CANCELLED)
          .killReason(null)
          .message(
              active.cancelledBy() != null
                  ? "cancelled: " + active.cancelledBy() + "; its sandbox was killed"
                  : active.killedByCancel()
                      ? "cancelled: "
                          + why
                          + "it did not stop on KeyboardInterrupt, so its sandbox was killed"
                      : "cancelled: " + why + "stopped by KeyboardInterrupt");
    }
    return o;
  }

  /**
   * Output that arrived between runs leads this run's stdout and stderr: say so, and how much (its
   * own limit is output_max_mb too, and past it the session's other processes were killed).
   */
  private static void noteIdleOutput(long bytes, Guard guard, RunRecord.Builder run) {
    if (bytes <= 0) {
      return;
    }
    String note =
        bytes
            + " bytes of output arrived between runs (from processes an earlier run left running)"
            + " and lead this run's stdout and stderr"
            + (bytes > guard.outputMaxBytes()
                ? "; past the "
                    + mib(guard.outputMaxBytes())
                    + " MiB output limit (output_max_mb) the server stopped reading them and killed"
                    + " every other process in the sandbox"
                : "");
    String message = run.build().message();
    run.message(message == null ? note : message + "; " + note);
  }

  /** A run the server stopped from outside, not for anything the code did. */
  static void interrupted(RunRecord.Builder run, String why) {
    run.status(RunStatus.INTERRUPTED)
        .killReason(null)
        .error(null)
        .exitCode(null)
        .message("interrupted: " + why + "; its sandbox was killed");
  }

  /** Peak memory and CPU time of the run, from the sandbox's cgroup. */
  private static void measure(ResourceUsage after, ResourceUsage before, RunRecord.Builder run) {
    if (after != null) {
      run.peakMemoryBytes(after.peakMemoryBytes());
      long cpu = after.cpuNanos() - (before == null ? 0 : before.cpuNanos());
      run.cpuMillis(Math.max(0, cpu) / 1_000_000);
    }
  }

  /** A limit the server found passed while the run was in flight. */
  private record Breach(KillReason reason, String message) {}

  private static Outcome execute(
      ActiveRun active,
      String code,
      int timeoutSeconds,
      Guard guard,
      Watch watch,
      TimeSource time,
      RunRecord.Builder run) {
    Sandbox sandbox = active.sandbox();
    ObjectNode payload = JSON.createObjectNode();
    payload.put("code", code);
    payload.put("outputs_max_bytes", guard.outputsMaxBytes());
    long started = time.nanoTime();
    Future<WorkerReply> reply;
    try {
      reply = sandbox.worker().request("exec", payload, active.events);
    } catch (IllegalStateException e) {
      throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, e.getMessage(), e);
    }
    if (active.cancelRequested()) {
      // cancel_run came before the request was on its way: it found nothing to interrupt.
      sandbox.worker().interrupt();
    }
    long deadline = started + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    Breach breach = null;
    long interruptedAt = 0;
    try {
      while (true) {
        long left = deadline - time.nanoTime();
        if (left <= 0) {
          return timedOut(sandbox, reply, timeoutSeconds, millisSince(time, started), run);
        }
        try {
          WorkerReply r =
              reply.get(
                  Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)), TimeUnit.NANOSECONDS);
          finished(r, guard, run);
          active.deniedImports(deniedImports(r.frame()));
          if (watch.endOfRun() && breach == null) {
            // Whatever the code made of the failed fork, what it started may still be forking:
            // a sandbox that hit its pids limit is ended with everything in it.
            return killedFor(pidsBreach(sandbox), sandbox, reply, millisSince(time, started), run);
          }
          if (breach != null) {
            stoppedBy(breach, run);
          } else {
            classifyError(sandbox, run);
          }
          return new Outcome(run, false);
        } catch (TimeoutException e) {
          // still running: look at the limits the kernel does not enforce
        }
        if (breach == null) {
          breach = watch.check();
          if (breach != null && breach.reason() == KillReason.PIDS_LIMIT) {
            return killedFor(breach, sandbox, reply, millisSince(time, started), run);
          }
          if (breach != null) {
            sandbox.worker().interrupt();
            interruptedAt = time.nanoTime();
          }
        } else if (time.nanoTime() - interruptedAt
            > TimeUnit.MILLISECONDS.toNanos(guard.graceMillis())) {
          return killedFor(breach, sandbox, reply, millisSince(time, started), run);
        }
      }
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof WorkerLostException lost)) {
        throw new PysandboxException(ErrorCode.INTERNAL, "execution failed: " + e.getCause(), e);
      }
      return lost(sandbox, lost, watch.before, millisSince(time, started), run);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      KillOutcome.kill(sandbox, "the server is stopping");
      output(partialAfterKill(reply, sandbox), run);
      interrupted(run, "the server is stopping");
      return new Outcome(run, true);
    }
  }

  /** Output, disk and processes, looked at between polls. */
  private static final class Watch {
    private final Sandbox sandbox;
    private final Guard guard;
    final ResourceUsage before;
    private ResourceUsage atEnd;
    private final TimeSource time;
    private long nextDiskCheck;

    Watch(Sandbox sandbox, Guard guard, ResourceUsage before, TimeSource time) {
      this.sandbox = sandbox;
      this.guard = guard;
      this.before = before;
      this.time = time;
      this.nextDiskCheck = time.nanoTime();
    }

    boolean pidsLimitHit() {
      return before != null
          && sandbox.usage().orElse(before).pidsLimitHits() > before.pidsLimitHits();
    }

    /**
     * Reads the counters once the runner has answered (kept for the run's record).
     *
     * @return true when the run hit the pids limit
     */
    boolean endOfRun() {
      if (before == null) {
        return false;
      }
      atEnd = sandbox.usage().orElse(before);
      return atEnd.pidsLimitHits() > before.pidsLimitHits();
    }

    /** The counters at the end of the run; read now when the run did not end normally. */
    ResourceUsage latest() {
      if (before == null) {
        return null;
      }
      return atEnd != null ? atEnd : sandbox.usage().orElse(null);
    }

    Breach check() {
      long out = sandbox.worker().outputBytes();
      if (out > guard.outputMaxBytes()) {
        return new Breach(
            KillReason.OUTPUT_LIMIT,
            "the run wrote "
                + mib(out)
                + " MiB to stdout and stderr, over the "
                + mib(guard.outputMaxBytes())
                + " MiB output limit (output_max_mb)");
      }
      if (pidsLimitHit()) {
        return pidsBreach(sandbox);
      }
      long t = time.nanoTime();
      // A workspace that is a file system of its own cannot pass its quota: nothing to measure.
      if (t - nextDiskCheck >= 0 && !sandbox.diskQuotaEnforced()) {
        long quota = sandbox.limits().diskBytes();
        long used = WorkspaceFiles.totalBytes(sandbox.workspace(), quota);
        // A big workspace costs more to measure: measure it less often (at most 10% of the time).
        long now = time.nanoTime();
        nextDiskCheck = now + 9 * (now - t);
        if (used > quota && used > guard.workspaceBytesBefore()) {
          return diskBreach(used, quota);
        }
      }
      return null;
    }
  }

  private static Breach diskBreach(long used, long quota) {
    return new Breach(
        KillReason.DISK_QUOTA,
        "the workspace /mnt/data grew past its "
            + mib(quota)
            + " MiB quota (disk_quota_mb; over "
            + mib(used)
            + " MiB now): delete files to go on");
  }

  private static Breach pidsBreach(Sandbox sandbox) {
    return new Breach(
        KillReason.PIDS_LIMIT,
        "the run hit the limit of "
            + sandbox.limits().pids()
            + " processes and threads (pids_limit), so its sandbox was killed with every"
            + " process in it");
  }

  /**
   * The disk quota's last word, once the run's files are counted: a run too quick for the watch
   * (under one poll) can still have grown the workspace past the quota, unless the file system
   * holds the workspace to it. Such a run fails for that, and the files stay so that the code can
   * delete them. The watch and this are the quota's only checks, both here.
   *
   * @param before the workspace's bytes before the run
   * @param after its bytes once the run's files were collected
   */
  static void checkQuotaAfterRun(Sandbox sandbox, long before, long after, RunRecord.Builder run) {
    long quota = sandbox.limits().diskBytes();
    if (!sandbox.diskQuotaEnforced()
        && after > quota
        && after > before
        && run.build().killReason() == null) {
      stoppedBy(diskBreach(after, quota), run);
    }
  }

  /** A run that finished after a limit made it stop: it failed, for that reason. */
  private static void stoppedBy(Breach breach, RunRecord.Builder run) {
    run.status(RunStatus.FAILED).killReason(breach.reason()).message(breach.message());
    if (run.build().error() == null) {
      run.error(new ErrorInfo("LimitExceeded", breach.message(), null));
    }
  }

  /**
   * A run that failed on its own may still have failed on a limit: the address-space rlimit
   * (MemoryError), the file-size rlimit or a full {@code /tmp} (errno 27, 28), the pids limit.
   */
  private static void classifyError(Sandbox sandbox, RunRecord.Builder run) {
    RunRecord r = run.build();
    if (r.status() != RunStatus.FAILED || r.error() == null) {
      return;
    }
    String name = r.error().name();
    String value = r.error().value() == null ? "" : r.error().value();
    if (name.equals("MemoryError")) {
      run.killReason(KillReason.MEMORY_LIMIT)
          .message(
              "MemoryError: the run asked for more memory than its limit of "
                  + mib(sandbox.limits().memoryBytes())
                  + " MiB allows (memory_limit_mb)");
    } else if (value.startsWith("[Errno 27]") || value.startsWith("[Errno 28]")) {
      run.killReason(KillReason.DISK_QUOTA)
          .message(
              name
                  + ": "
                  + value
                  + " (a file may grow to the disk quota of "
                  + mib(sandbox.limits().diskBytes())
                  + " MiB; /tmp holds "
                  + mib(sandbox.limits().tmpBytes())
                  + " MiB)");
    }
  }

  private static Outcome timedOut(
      Sandbox sandbox,
      Future<WorkerReply> reply,
      int timeoutSeconds,
      long elapsed,
      RunRecord.Builder run) {
    KillOutcome kill = KillOutcome.kill(sandbox, "timed out after " + timeoutSeconds + " s");
    WorkerReply partial = partialAfterKill(reply, sandbox);
    output(partial, run);
    run.status(RunStatus.TIMED_OUT)
        .killReason(KillReason.TIMEOUT)
        .durationMs(elapsed)
        .message(
            "execution timed out after "
                + elapsed
                + " ms (limit "
                + timeoutSeconds
                + " s); "
                + (kill.confirmed()
                    ? "the sandbox was killed" + kill.leftBehind()
                    : "killing the sandbox failed: " + kill.failure()));
    return new Outcome(run, true);
  }

  private static Outcome killedFor(
      Breach breach,
      Sandbox sandbox,
      Future<WorkerReply> reply,
      long elapsed,
      RunRecord.Builder run) {
    KillOutcome kill = KillOutcome.kill(sandbox, breach.reason().wireName());
    output(partialAfterKill(reply, sandbox), run);
    String message = breach.message();
    if (breach.reason() != KillReason.PIDS_LIMIT) {
      message += "; it did not stop on KeyboardInterrupt, so its sandbox was killed";
    }
    message +=
        kill.confirmed()
            ? kill.leftBehind()
            : "; but killing the sandbox failed: " + kill.failure();
    run.status(RunStatus.FAILED)
        .killReason(breach.reason())
        .durationMs(elapsed)
        .error(new ErrorInfo("LimitExceeded", message, null))
        .message(message);
    return new Outcome(run, true);
  }

  /** The sandbox went away on its own: the kernel's OOM killer, a crash, a kill from outside. */
  private static Outcome lost(
      Sandbox sandbox,
      WorkerLostException lost,
      ResourceUsage before,
      long elapsed,
      RunRecord.Builder run) {
    if (lost.protocolViolation()) {
      // Cut off by the server: the sandbox is being killed, whatever its counters say.
      output(lost.partial(), run);
      SandboxExit exit = exitOf(sandbox);
      String message = lost.getMessage() + "; the sandbox was killed with every process in it";
      run.durationMs(elapsed)
          .exitCode(exit == null ? null : exit.code())
          .status(RunStatus.FAILED)
          .killReason(KillReason.PROTOCOL_VIOLATION)
          .error(new ErrorInfo("ProtocolViolation", message, null))
          .message(message);
      return new Outcome(run, true);
    }
    SandboxExit exit = exitOf(sandbox);
    output(lost.partial(), run);
    ResourceUsage after = sandbox.usage().orElse(null);
    run.durationMs(elapsed).exitCode(exit == null ? null : exit.code());
    if (before != null && after != null && after.oomKills() > before.oomKills()) {
      String message =
          "the run passed its memory limit of "
              + mib(sandbox.limits().memoryBytes())
              + " MiB (memory_limit_mb; peak "
              + mib(after.peakMemoryBytes())
              + " MiB) and the kernel killed it; the sandbox is gone";
      run.status(RunStatus.FAILED)
          .killReason(KillReason.MEMORY_LIMIT)
          .error(new ErrorInfo("MemoryLimitExceeded", message, null))
          .message(message);
      return new Outcome(run, true);
    }
    if (before != null && after != null && after.pidsLimitHits() > before.pidsLimitHits()) {
      Breach b = pidsBreach(sandbox);
      run.status(RunStatus.FAILED)
          .killReason(b.reason())
          .error(new ErrorInfo("LimitExceeded", b.message(), null))
          .message(b.message());
      return new Outcome(run, true);
    }
    if (exit != null && exit.hostFailure() != null) {
      interrupted(run, exit.hostFailure());
      return new Outcome(run, true);
    }
    String how =
        exit == null
            ? "stopped answering (" + lost.getMessage() + ")"
            : exit.killedByServer() ? "was killed by the server" : exit.describe();
    String message =
        "the sandbox's Python process "
            + how
            + " before the run finished"
            + (exit != null && !exit.killedByServer() && exit.code() != null
                ? " (os._exit(), a crash, or a kill from outside)"
                : "");
    run.status(RunStatus.FAILED)
        .error(new ErrorInfo("SandboxExited", message, null))
        .message(message);
    return new Outcome(run, true);
  }

  private static long mib(long bytes) {
    return bytes / Limits.MIB;
  }

  private static void finished(WorkerReply r, Guard guard, RunRecord.Builder run) {
    ObjectNode f = r.frame();
    output(r, run);
    run.durationMs(TimeUnit.NANOSECONDS.toMillis(r.elapsedNanos()));
    if (f.hasNonNull("result")) {
      run.result(map(f.get("result")));
    }
    List<Map<String, Object>> displays = new ArrayList<>();
    for (ObjectNode d : r.displays()) {
      displays.add(map(d));
    }
    for (JsonNode fig : f.path("figures")) {
      displays.add(map(fig));
    }
    run.displays(displays);
    JsonNode outputs = f.path("outputs");
    String rejected = SandboxValues.rejectedOutputs(outputs, guard.outputsMaxBytes());
    List<String> nonJson = new ArrayList<>();
    if (rejected == null) {
      run.outputs(outputs.has("values") ? map(outputs.get("values")) : Map.of());
      outputs.path("non_json").forEach(n -> nonJson.add(n.asText()));
    } else {
      run.outputs(Map.of());
    }
    run.outputsNonJson(nonJson);
    if ("ok".equals(f.path("status").asText()) && rejected == null) {
      run.status(RunStatus.SUCCEEDED).exitCode(f.path("exit_code").asInt(0));
      return;
    }
    if (rejected != null && "ok".equals(f.path("status").asText())) {
      run.status(RunStatus.FAILED)
          .exitCode(f.path("exit_code").asInt(0))
          .error(new ErrorInfo("OutputsRejected", rejected, null))
          .message("OutputsRejected: " + rejected);
      return;
    }
    JsonNode err = f.path("error");
    ErrorInfo error =
        new ErrorInfo(
            err.path("name").asText("Error"),
            err.path("value").asText(""),
            err.path("traceback").asText(null));
    run.status(RunStatus.FAILED)
        .exitCode(f.path("exit_code").asInt(1))
        .error(error)
        .message(
            error.name()
                + (error.value().isEmpty() ? "" : ": " + error.value())
                + (rejected == null ? "" : "; and OutputsRejected: " + rejected));
  }

  /** A module name as the runner reports one; anything else in the list is not taken. */
  private static final java.util.regex.Pattern MODULE =
      java.util.regex.Pattern.compile(
          "[A-Za-z_][A-Za-z0-9_]{0,99}(\\.[A-Za-z_][A-Za-z0-9_]{0,99}){0,9}");

  /** At most this many denied imports are taken from one answer. */
  static final int MAX_DENIED_IMPORTS = 20;

  /**
   * The imports the runner's import policy refused during the execution ({@code denied_imports} in
   * its answer): module names only, each once, at most {@value #MAX_DENIED_IMPORTS}. The code can
   * forge or hide these (its process writes the answer), so they are a report, never a verdict.
   */
  static List<String> deniedImports(ObjectNode frame) {
    List<String> out = new ArrayList<>();
    for (JsonNode n : frame.path("denied_imports")) {
      String m = n.asText("");
      if (n.isTextual() && MODULE.matcher(m).matches() && !out.contains(m)) {
        out.add(m);
        if (out.size() == MAX_DENIED_IMPORTS) {
          break;
        }
      }
    }
    return out;
  }

  private static void output(WorkerReply r, RunRecord.Builder run) {
    CapturedText out = r.stdout();
    CapturedText err = r.stderr();
    run.stdout(out.text())
        .stdoutTruncated(out.truncated())
        .stdoutBytes(out.totalBytes())
        .stderr(err.text())
        .stderrTruncated(err.truncated())
        .stderrBytes(err.totalBytes());
  }

  /** After a kill the request fails with the output it had; wait briefly for that. */
  private static WorkerReply partialAfterKill(Future<WorkerReply> reply, Sandbox sandbox) {
    try {
      return reply.get(LOST_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof WorkerLostException lost) {
        return lost.partial();
      }
    } catch (TimeoutException e) {
      sandbox.worker().close("killed");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return sandbox.worker().partial();
  }

  private static SandboxExit exitOf(Sandbox sandbox) {
    try {
      return sandbox.exited().get(LOST_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException | TimeoutException e) {
      return null;
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(JsonNode node) {
    return JSON.convertValue(node, Map.class);
  }

  private static long millisSince(TimeSource time, long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(time.nanoTime() - startNanos);
  }
}
