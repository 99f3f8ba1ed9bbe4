package dev.pysandbox.core.analysis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.sandboxes.WorkspaceDisposal;
import dev.pysandbox.util.Futures;
import dev.pysandbox.worker.WorkerLostException;
import dev.pysandbox.worker.WorkerReply;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The risk analysis of code before it runs: Python's own {@code ast}, by the interpreter that will
 * run the code, in a sandbox of its own (the runner's {@code analyze} operation, which loads {@code
 * analyzer.py}); the server's process never parses the code.
 *
 * <p>One sandbox, started from the backend on first use with small limits (it runs no user code),
 * used by one caller at a time: an analysis of 100 lines takes about 2 ms, so callers queue briefly
 * on a fair lock rather than cost a second sandbox. It is no session: not listed, not counted
 * against {@code max_sessions}, killed when the core closes, and reaped after a crash as every
 * sandbox of this server is. A sandbox whose runner exited, broke the protocol or did not answer
 * within {@value #ANSWER_MILLIS} ms is killed and a fresh one started.
 */
public final class CodeAnalysis implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CodeAnalysis.class);

  /** How long one analysis may take before its sandbox is killed and the caller told so. */
  static final long ANSWER_MILLIS = 5_000;

  /**
   * The analyser's own deadline: past it, it stops and says what it did not look at (a finding
   * {@code analysis_incomplete}), well before {@link #ANSWER_MILLIS}.
   */
  static final long BUDGET_MILLIS = 2_000;

  /** How long a caller waits for the callers before it. */
  static final long QUEUE_MILLIS = 30_000;

  private final SandboxBackend backend;
  private final SandboxSpec spec;
  private final long startTimeoutSeconds;
  private final Executor disposal;
  private final ReentrantLock lock = new ReentrantLock(true);

  /** Written under the lock; read without it by {@link #close()}. */
  private volatile Sandbox sandbox;

  private volatile boolean closed;

  /**
   * @param startTimeoutSeconds how long a sandbox may take to become ready
   * @param disposal kills and removes a discarded sandbox, off the caller's thread
   */
  public CodeAnalysis(
      SandboxBackend backend, SandboxSpec spec, long startTimeoutSeconds, Executor disposal) {
    this.backend = backend;
    this.spec = spec;
    this.startTimeoutSeconds = startTimeoutSeconds;
    this.disposal = disposal;
  }

  /**
   * The analysis sandbox's spec: no preloads, small output limits, and limits sized for parsing
   * code of {@code code_max_bytes} (Python's AST takes up to about 400 bytes per byte of dense
   * source), at least 256 MiB, at most the configured memory maximum; 8 processes, one CPU.
   */
  public static SandboxSpec spec(PysandboxConfig config) {
    Limits defaults = config.defaultLimits();
    Limits max = config.maxLimits();
    long memory =
        Math.min(max.memoryBytes(), Math.max(256 * Limits.MIB, 400L * config.codeMaxBytes()));
    Limits limits =
        new Limits(
            memory,
            8,
            Math.min(1.0, max.cpus()),
            defaults.diskBytes(), // shares the workspace image template with every other sandbox
            Math.min(defaults.tmpBytes(), 16 * Limits.MIB));
    return new SandboxSpec(List.of(), 64 * 1024, limits, Limits.MIB);
  }

  /**
   * Analyses {@code code} without running it; the caller has checked its size.
   *
   * @throws PysandboxException {@code backend_unavailable} when no analysis sandbox can be started
   *     or the server is stopping; {@code timeout} when the analysis took over {@value
   *     #ANSWER_MILLIS} ms or the callers before this one kept it waiting {@value #QUEUE_MILLIS}
   *     ms; {@code internal} when the analysis sandbox died on this code twice
   */
  public ValidationReport analyze(String code) {
    ObjectNode payload = Json.mapper().createObjectNode();
    payload.put("code", code);
    payload.put("budget_ms", BUDGET_MILLIS);
    acquire();
    try {
      String lastDeath = null;
      for (int attempt = 1; attempt <= 2; attempt++) {
        Sandbox s = ready();
        WorkerReply reply;
        try {
          reply = s.worker().request("analyze", payload).get(ANSWER_MILLIS, TimeUnit.MILLISECONDS);
        } catch (IllegalStateException e) {
          lastDeath = e.getMessage(); // it went between the look and the request: another one
          discard(s, "its runner was gone: " + e.getMessage());
          continue;
        } catch (ExecutionException e) {
          Throwable cause = Futures.unwrap(e);
          lastDeath = cause.getMessage();
          discard(s, "it died analysing: " + lastDeath);
          if (cause instanceof WorkerLostException) {
            continue; // once more in a fresh sandbox: the first may have been killed from outside
          }
          throw new PysandboxException(ErrorCode.INTERNAL, "code analysis failed: " + cause, cause);
        } catch (TimeoutException e) {
          discard(s, "it did not answer within " + ANSWER_MILLIS + " ms");
          throw new PysandboxException(
              ErrorCode.TIMEOUT,
              "code analysis did not finish within "
                  + ANSWER_MILLIS
                  + " ms, so the code was not analysed (the analysis sandbox was restarted)");
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new PysandboxException(ErrorCode.INTERNAL, "interrupted while analysing code", e);
        }
        return answer(s, reply);
      }
      throw new PysandboxException(
          ErrorCode.INTERNAL,
          "the analysis sandbox died twice while analysing this code, so it was not analysed"
              + " (last: "
              + lastDeath
              + ")");
    } finally {
      lock.unlock();
    }
  }

  private ValidationReport answer(Sandbox s, WorkerReply reply) {
    JsonNode frame = reply.frame();
    if (!"ok".equals(frame.path("status").asText()) || !frame.path("report").isObject()) {
      JsonNode error = frame.path("error");
      discard(s, "it could not analyse");
      throw new PysandboxException(
          ErrorCode.INTERNAL,
          "the analysis sandbox could not analyse code: "
              + error.path("name").asText("no report")
              + ": "
              + error.path("value").asText(""));
    }
    return AnalysisReports.read(frame.path("report"), reply.elapsedNanos() / 1e6);
  }

  private void acquire() {
    try {
      if (!lock.tryLock(QUEUE_MILLIS, TimeUnit.MILLISECONDS)) {
        throw new PysandboxException(
            ErrorCode.TIMEOUT,
            "code analysis is busy: waited "
                + QUEUE_MILLIS
                + " ms behind "
                + lock.getQueueLength()
                + " other callers");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted while waiting to analyse", e);
    }
  }

  /** The analysis sandbox, started now if there is none or its runner has gone (under the lock). */
  private Sandbox ready() {
    if (closed) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "the server is stopping: no code analysis");
    }
    Sandbox s = sandbox;
    if (s != null && s.worker().isOpen()) {
      return s;
    }
    if (s != null) {
      discard(s, "its runner exited: " + s.worker().closed().getNow("?"));
    }
    long started = System.nanoTime();
    s = start();
    sandbox = s;
    if (closed) {
      discard(s, "the server is stopping");
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "the server is stopping: no code analysis");
    }
    log.info(
        "code analysis: sandbox {} started in {} ms",
        s.id(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    return s;
  }

  private Sandbox start() {
    long wait = startTimeoutSeconds + 5;
    try {
      return backend.start(spec).get(wait, TimeUnit.SECONDS);
    } catch (ExecutionException | CompletionException e) {
      if (Futures.unwrap(e) instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "cannot start the code analysis sandbox: " + Futures.unwrap(e).getMessage(),
          e);
    } catch (TimeoutException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "the code analysis sandbox did not become ready within " + wait + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted while starting a sandbox", e);
    }
  }

  /** Forgets the sandbox and kills it, off the caller's thread. */
  private void discard(Sandbox s, String why) {
    if (sandbox == s) {
      sandbox = null;
    }
    log.warn("code analysis: sandbox {} is replaced: {}", s.id(), why);
    WorkspaceDisposal.killAndDiscard(s, "code analysis: " + why, disposal);
  }

  /** The sandbox in use, if any (for tests). */
  public Sandbox sandbox() {
    return sandbox;
  }

  /**
   * Kills the analysis sandbox (the backend, closing next, releases its workspace with every other
   * one, as for pooled sandboxes and sessions); an analysis in flight fails, later ones are
   * refused.
   */
  @Override
  public void close() {
    closed = true;
    Sandbox s = sandbox;
    if (s != null) {
      sandbox = null;
      s.kill("server stopping");
    }
  }
}
