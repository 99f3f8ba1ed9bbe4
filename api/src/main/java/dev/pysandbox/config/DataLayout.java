package dev.pysandbox.config;

import dev.pysandbox.api.Ids;
import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.LocalDate;

/**
 * Where everything lives under the data directory. One place, so that the store, the backend and
 * the faces agree, and start-up hygiene knows what to look at.
 *
 * <pre>
 * data_dir/
 *   pysandbox.db            run history, sessions and API keys (SQLite)
 *   config.properties       optional settings
 *   blobs/AA/SHA256         (0700) the files runs kept, each distinct content once (named by its
 *                           sha256, AA its first two hex digits; which run keeps which is in the
 *                           database); blobs/tmp/ holds copies being written
 *   runs/RUN_ID/            a run's notebooks and its output as it happens (events.ndjson);
 *     files/                files a run kept before the blob store (moved into it at start), or
 *                           those of a run deleted with delete_files=false
 *   trajectories/TENANT/    (0700) the calls agents made, one JSON object a line (0600 files):
 *     sessions/SESSION_ID.jsonl  the calls that named or made a session
 *     days/YYYY-MM-DD.jsonl      the others (one-shot runs, listings), by day (UTC)
 *   instances/ID.lock       held by each live server process; a free lock means a dead one
 *   native/                 the server's JNI library, by content hash (never seen by sandboxes)
 *   logs/hs_err_pid*.log    the JVM's report of a fatal error, if it ever has one
 *   run/io-INSTANCE.sock       the worker hub's socket (private to the server's user)
 *   sandbox/                what sandboxes may see (bind-mounted, never whole)
 *     lib/                  runner.py by content hash, a stub /etc
 *     workspaces/SANDBOX_ID/  one sandbox's /mnt/data (a mount point when it has its own image)
 *     images/                 (0700) SANDBOX_ID.img: a workspace's ext4 image, sparse, while it
 *                             lives; template-*.img: fresh file systems copied for each one
 * </pre>
 */
public record DataLayout(Path dataDir) {
  /**
   * Where a launcher of a server running as root bind-mounts the {@code sandbox/} directory of each
   * data directory, in its own mount namespace, so that the unprivileged bwrap can reach it.
   */
  public static final Path STAGE_BASE = Path.of("/run/pysandbox-stage");

  /**
   * Makes the data directory private to its owner, as every process that opens it does; a file
   * system without POSIX permissions (or a directory of another owner) keeps what it has.
   */
  public void restrictDataDir() {
    try {
      Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx------"));
    } catch (IOException | UnsupportedOperationException e) {
      // the directory's own permissions stand; every file in it is made private by its writer
    }
  }

  /**
   * 12 hex digits naming this data directory on the host (a hash of its real path), for what lives
   * outside it, such as cgroups: a server only ever cleans up what carries its own directory's
   * identity.
   */
  public String identity() {
    Path real;
    try {
      real = dataDir.toRealPath();
    } catch (java.io.IOException e) {
      real = dataDir.toAbsolutePath().normalize();
    }
    return Sha256.hex(real.toString()).substring(0, 12);
  }

  public Path database() {
    return dataDir.resolve("pysandbox.db");
  }

  public Path runsDir() {
    return dataDir.resolve("runs");
  }

  /** Where agent runs' notebooks are written: {@code agent-runs/<id>/notebook.ipynb}. */
  public Path agentRunsDir() {
    return dataDir.resolve("agent-runs");
  }

  public Path runFiles(String runId) {
    return runsDir().resolve(runId).resolve("files");
  }

  /** Every tenant's trajectory files. */
  public Path trajectoriesDir() {
    return dataDir.resolve("trajectories");
  }

  /**
   * The trajectory of one session of one tenant. Both names must follow their id rules, so that no
   * path is made of anything else.
   *
   * @throws dev.pysandbox.api.PysandboxException {@code invalid_argument} for a name that does not
   */
  public Path sessionTrajectory(String tenant, String sessionId) {
    return trajectoriesDir()
        .resolve(Ids.requireTenant(tenant))
        .resolve("sessions")
        .resolve(Ids.requireSessionId(sessionId) + ".jsonl");
  }

  /** The trajectory of one tenant's calls that named no session, on one day (UTC). */
  public Path dayTrajectory(String tenant, LocalDate day) {
    return trajectoriesDir()
        .resolve(Ids.requireTenant(tenant))
        .resolve("days")
        .resolve(day + ".jsonl");
  }

  public Path instancesDir() {
    return dataDir.resolve("instances");
  }

  /** Where the server's own native library is written and loaded from. */
  public Path nativeDir() {
    return dataDir.resolve("native");
  }

  /**
   * Where the JVM writes a fatal error report ({@code hs_err_pid<pid>.log}: bin/pysandbox sets
   * {@code -XX:ErrorFile}); made by a server at start, so that the JVM finds it.
   */
  public Path logsDir() {
    return dataDir.resolve("logs");
  }

  public Path runtimeDir() {
    return dataDir.resolve("run");
  }

  public Path sandboxRoot() {
    return dataDir.resolve("sandbox");
  }

  public Path libDir() {
    return sandboxRoot().resolve("lib");
  }

  public Path workspacesDir() {
    return sandboxRoot().resolve("workspaces");
  }

  /** File-system images of workspaces (root only, never bound into a sandbox). */
  public Path imagesDir() {
    return sandboxRoot().resolve("images");
  }
}
