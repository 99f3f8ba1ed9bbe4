package dev.pysandbox.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.KillReport;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxExit;
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
 * One execution of code in a sandbox with the timeout enforced from here: on expiry the whole
 * sandbox is killed and checked, and the run is {@code timed_out} with the limit and the time
 * taken. The outcome is classified by the server (succeeded, failed, timed out, lost) and written
 * onto a run record; nothing the code reports decides the status on its own.
 */
final class Execution {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long LOST_GRACE_MILLIS = 2000;

  /**
   * How the execution ended.
   *
   * @param sandboxGone true when the sandbox no longer runs (killed or exited)
   */
  record Outcome(RunRecord.Builder run, boolean sandboxGone) {}

  private Execution() {}

  /**
   * Runs {@code code} and fills status, output, result and timing into {@code run}. A run whose
   * {@code active} handle was cancelled ends {@code cancelled}, however it stopped.
   */
  static Outcome run(ActiveRun active, String code, int timeoutSeconds, RunRecord.Builder run) {
    Outcome o = execute(active, code, timeoutSeconds, run);
    if (active.cancelRequested()) {
      run.status(RunStatus.CANCELLED)
          .message(
              active.killedByCancel()
                  ? "cancelled: it did not stop on KeyboardInterrupt, so its sandbox was killed"
                  : "cancelled: stopped by KeyboardInterrupt");
    }
    return o;
  }

  private static Outcome execute(
      ActiveRun active, String code, int timeoutSeconds, RunRecord.Builder run) {
    Sandbox sandbox = active.sandbox();
    ObjectNode payload = JSON.createObjectNode();
    payload.put("code", code);
    long started = System.nanoTime();
    Future<WorkerReply> reply;
    try {
      reply = sandbox.worker().request("exec", payload);
    } catch (IllegalStateException e) {
      throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, e.getMessage(), e);
    }
    if (active.cancelRequested()) {
      // cancel_run came before the request was on its way: it found nothing to interrupt.
      sandbox.worker().interrupt();
    }
    try {
      WorkerReply r = reply.get(timeoutSeconds, TimeUnit.SECONDS);
      finished(r, run);
      return new Outcome(run, false);
    } catch (TimeoutException e) {
      long elapsed = millisSince(started);
      KillReport kill = await(sandbox.kill("timed out after " + timeoutSeconds + " s"));
      WorkerReply partial = partialAfterKill(reply, sandbox);
      output(partial, run);
      run.status(RunStatus.TIMED_OUT)
          .durationMs(elapsed)
          .message(
              "execution timed out after "
                  + elapsed
                  + " ms (limit "
                  + timeoutSeconds
                  + " s); the sandbox was killed"
                  + (kill == null
                      ? ""
                      : kill.leftBehind() == 0
                          ? " and no process of it is left"
                          : " but " + kill.leftBehind() + " of its processes could not be killed"));
      return new Outcome(run, true);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof WorkerLostException lost)) {
        throw new PysandboxException(ErrorCode.INTERNAL, "execution failed: " + e.getCause(), e);
      }
      long elapsed = millisSince(started);
      SandboxExit exit = exitOf(sandbox);
      output(lost.partial(), run);
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
          .durationMs(elapsed)
          .exitCode(exit == null ? null : exit.code())
          .error(new ErrorInfo("SandboxExited", message, null))
          .message(message);
      return new Outcome(run, true);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      await(sandbox.kill("the server is stopping"));
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted while running", e);
    }
  }

  private static void finished(WorkerReply r, RunRecord.Builder run) {
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
    run.outputs(outputs.has("values") ? map(outputs.get("values")) : Map.of());
    List<String> nonJson = new ArrayList<>();
    outputs.path("non_json").forEach(n -> nonJson.add(n.asText()));
    run.outputsNonJson(nonJson);
    if ("ok".equals(f.path("status").asText())) {
      run.status(RunStatus.SUCCEEDED).exitCode(f.path("exit_code").asInt(0));
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
        .message(error.name() + (error.value().isEmpty() ? "" : ": " + error.value()));
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

  static KillReport await(java.util.concurrent.CompletableFuture<KillReport> kill) {
    try {
      return kill.get(10, TimeUnit.SECONDS);
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

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }
}
