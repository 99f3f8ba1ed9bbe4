package dev.pysandbox.core.environments;

import static dev.pysandbox.core.environments.BuildOutput.tail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.sandboxes.KillOutcome;
import dev.pysandbox.core.sandboxes.WorkspaceDisposal;
import dev.pysandbox.packages.Requirement;
import dev.pysandbox.packages.Requirements;
import dev.pysandbox.util.DiskFullException;
import dev.pysandbox.util.Futures;
import dev.pysandbox.worker.WorkerReply;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * One environment build's sandbox: started with the temporary directory bound writable (and a
 * wheelhouse read-only), the build script ({@code python3 -m venv} and pip) run in it under {@code
 * env_build_timeout} and {@code env_max_mb}, its result read back; a failure is explained from what
 * pip printed (a file of this host, a full disk, an index out of reach, which may be retried).
 */
final class BuildSandbox {
  private static final ObjectMapper JSON = Json.mapper();
  private static final long POLL_MILLIS = 500;

  /** A build that ran out of space while the host's disk has less than this free: disk_full. */
  private static final long HOST_FULL_BELOW_BYTES = 64L << 20;

  private final PysandboxConfig config;
  private final SandboxBackend backend;

  BuildSandbox(PysandboxConfig config, SandboxBackend backend) {
    this.config = config;
    this.backend = backend;
  }

  /**
   * Builds into {@code temp} and returns the build script's result.
   *
   * @param way the build's way out to the index hosts, or {@code null} for none
   */
  JsonNode run(
      String key,
      Path temp,
      List<Requirement> requirements,
      Consumer<String> progress,
      Limits limits,
      Wheelhouse wheels,
      SandboxSpec.Egress way) {
    List<SandboxSpec.HostMount> mounts = new ArrayList<>();
    if (wheels != null) {
      mounts.add(new SandboxSpec.HostMount("wheels", wheels.dir()));
    }
    SandboxSpec spec =
        new SandboxSpec(
            List.of(),
            1 << 20,
            limits,
            64L << 20,
            SandboxSpec.Imports.NONE,
            mounts,
            new SandboxSpec.Environment(key, temp, null, true),
            way);
    Sandbox sandbox;
    try {
      sandbox = backend.start(spec).get(config.startupTimeoutSeconds() + 5L, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable c = Futures.unwrap(e);
      if (c instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "no build sandbox could start: " + c, c);
    } catch (TimeoutException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "no build sandbox became ready in time");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted starting a build", e);
    }
    try {
      return exec(key, sandbox, temp, requirements, progress);
    } finally {
      KillOutcome.kill(sandbox, "environment build over");
      sandbox.exited().orTimeout(10, TimeUnit.SECONDS).exceptionally(e -> null).join();
      WorkspaceDisposal.discard(sandbox);
    }
  }

  private JsonNode exec(
      String key,
      Sandbox sandbox,
      Path temp,
      List<Requirement> requirements,
      Consumer<String> progress) {
    ObjectNode payload = JSON.createObjectNode();
    payload.put("code", BuildScript.of(config, Requirements.requirementsFile(requirements)));
    BuildOutput lines = new BuildOutput(progress);
    Future<WorkerReply> reply = sandbox.worker().request("exec", payload, lines);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(config.envBuildTimeoutSeconds());
    WorkerReply r;
    while (true) {
      try {
        r = reply.get(POLL_MILLIS, TimeUnit.MILLISECONDS);
        break;
      } catch (TimeoutException e) {
        if (System.nanoTime() - deadline > 0) {
          throw failed(
              key,
              "the build took longer than env_build_timeout ("
                  + config.envBuildTimeoutSeconds()
                  + " s) and was killed",
              lines.tail(),
              false);
        }
        long size = EnvironmentFiles.sizeOf(temp);
        if (size > config.envMaxBytes()) {
          throw failed(
              key,
              "the build wrote more than env_max_mb ("
                  + config.envMaxBytes() / Limits.MIB
                  + " MiB) and was killed",
              lines.tail(),
              false);
        }
      } catch (ExecutionException e) {
        throw failed(
            key,
            "the build sandbox died (" + Futures.unwrap(e).getMessage() + ")",
            lines.tail(),
            false);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new PysandboxException(ErrorCode.INTERNAL, "interrupted during a build", e);
      }
    }
    String out = r.stdout().text();
    String err = r.stderr().text();
    String status = r.frame().path("status").asText();
    int mark = out.lastIndexOf(BuildOutput.RESULT_MARK);
    if (!"ok".equals(status) || mark < 0) {
      throw whyFailed(key, r, out, err, temp);
    }
    int end = out.indexOf('\n', mark);
    try {
      return JSON.readTree(
          out.substring(mark + BuildOutput.RESULT_MARK.length(), end < 0 ? out.length() : end));
    } catch (IOException e) {
      throw failed(key, "the build's result was not readable", tail(out), false);
    }
  }

  /** What a build that did not succeed is reported as, from what it printed. */
  private PysandboxException whyFailed(
      String key, WorkerReply r, String out, String err, Path temp) {
    String local = PipFailures.localError(out + "\n" + err);
    if (local != null) {
      // Not the index's fault, whatever the probes of the indexes after it said.
      return failed(
          key,
          "pip failed on a file of this host, not on the package index: "
              + PipFailures.explain(local, config.findLinks()),
          tail(PipFailures.withoutIndexProbes(out + "\n" + err).strip()),
          false);
    }
    String said =
        (out + "\n" + err).strip().replace(BuildScript.UNREACHABLE_MARK, "index unreachable: ");
    String why = r.frame().path("error").path("value").asText("");
    // Only the host's disk: a build's /tmp of its own (tmp_size_mb) can be full on its own.
    long hostFree = DiskFullException.usable(temp);
    if ((said.contains("No space left on device") || said.contains("Disk quota exceeded"))
        && hostFree >= 0
        && hostFree < HOST_FULL_BELOW_BYTES) {
      return new PysandboxException(
          ErrorCode.DISK_FULL,
          "environment "
              + key
              + " could not be built: the disk that holds the environments is full ("
              + DiskFullException.describe(temp)
              + "); free space and try again\n--- pip said ---\n"
              + tail(said));
    }
    return failed(key, why.isEmpty() ? "pip failed" : why, tail(said), indexUnreachable(out + err));
  }

  /**
   * pip could not reach an index (the build script asked each index itself after pip failed, or pip
   * said so): a later try may succeed.
   */
  static boolean indexUnreachable(String printed) {
    return printed.contains(BuildScript.UNREACHABLE_MARK)
        || printed.contains("ProxyError")
        || printed.contains("NewConnectionError");
  }

  private static PysandboxException failed(
      String key, String why, String printed, boolean retryable) {
    return new PysandboxException(
        ErrorCode.ENVIRONMENT_FAILED,
        "environment "
            + key
            + " could not be built: "
            + why
            + (retryable ? " (the package index could not be reached; try again later)" : "")
            + (printed.isBlank() ? "" : "\n--- pip said ---\n" + printed),
        retryable);
  }
}
