package dev.pysandbox.core.runs;

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
import dev.pysandbox.core.sandboxes.KillOutcome;
import dev.pysandbox.util.TimeSource;
import dev.pysandbox.worker.WorkerLostException;
import dev.pysandbox.worker.WorkerReply;
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
      ExecutionWatch.Guard guard,
      TimeSource time,
      RunRecord.Builder run) {
    Sandbox sandbox = active.sandbox();
    sandbox.resetPeak();
    ResourceUsage before = sandbox.usage().orElse(null);
    ExecutionWatch watch = new ExecutionWatch(sandbox, guard, before, time);
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
  private static void noteIdleOutput(
      long bytes, ExecutionWatch.Guard guard, RunRecord.Builder run) {
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

  private static Outcome execute(
      ActiveRun active,
      String code,
      int timeoutSeconds,
      ExecutionWatch.Guard guard,
      ExecutionWatch watch,
      TimeSource time,
      RunRecord.Builder run) {
    Sandbox sandbox = active.sandbox();
    ObjectNode payload = JSON.createObjectNode();
    payload.put("code", code);
    payload.put("outputs_max_bytes", guard.outputsMaxBytes());
    long started = time.nanoTime();
    Future<WorkerReply> reply;
    try {
      reply = sandbox.worker().request("exec", payload, active.requests());
    } catch (IllegalStateException e) {
      throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, e.getMessage(), e);
    }
    if (active.cancelRequested()) {
      // cancel_run came before the request was on its way: it found nothing to interrupt.
      sandbox.worker().interrupt();
    }
    long deadline = started + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    ExecutionWatch.Breach breach = null;
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
          ExecReplies.finished(r, guard.outputsMaxBytes(), run);
          active.deniedImports(ExecReplies.deniedImports(r.frame()));
          if (watch.endOfRun() && breach == null) {
            // Whatever the code made of the failed fork, what it started may still be forking:
            // a sandbox that hit its pids limit is ended with everything in it.
            return killedFor(
                ExecutionWatch.pidsBreach(sandbox),
                sandbox,
                reply,
                millisSince(time, started),
                run);
          }
          if (breach != null) {
            ExecutionWatch.stoppedBy(breach, run);
          } else {
            ExecutionWatch.classifyError(sandbox, run);
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
      ExecReplies.output(partialAfterKill(reply, sandbox), run);
      interrupted(run, "the server is stopping");
      return new Outcome(run, true);
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
    ExecReplies.output(partial, run);
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
      ExecutionWatch.Breach breach,
      Sandbox sandbox,
      Future<WorkerReply> reply,
      long elapsed,
      RunRecord.Builder run) {
    KillOutcome kill = KillOutcome.kill(sandbox, breach.reason().wireName());
    ExecReplies.output(partialAfterKill(reply, sandbox), run);
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
      ExecReplies.output(lost.partial(), run);
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
    ExecReplies.output(lost.partial(), run);
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
      ExecutionWatch.Breach b = ExecutionWatch.pidsBreach(sandbox);
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

  private static long millisSince(TimeSource time, long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(time.nanoTime() - startNanos);
  }
}
