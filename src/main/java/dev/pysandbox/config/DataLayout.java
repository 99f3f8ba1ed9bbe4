package dev.pysandbox.config;

import dev.pysandbox.util.Sha256;
import java.nio.file.Path;

/**
 * Where everything lives under the data directory. One place, so that the store, the backend and
 * the faces agree, and start-up hygiene knows what to look at.
 *
 * <pre>
 * data_dir/
 *   pysandbox.db            run history, sessions and API keys (SQLite)
 *   config.properties       optional settings
 *   runs/RUN_ID/files/      files a run created or changed, as it left them
 *   instances/ID.lock       held by each live server process; a free lock means a dead one
 *   native/                 the server's JNI library, by content hash (never seen by sandboxes)
 *   run/io-PID.sock         the worker hub's socket (private to the server's user)
 *   sandbox/                what sandboxes may see (bind-mounted, never whole)
 *     lib/                  runner.py by content hash, a stub /etc
 *     workspaces/SANDBOX_ID/  one sandbox's /mnt/data (a mount point when it has its own image)
 *     images/                 (0700) SANDBOX_ID.img: a workspace's ext4 image, sparse, while it
 *                             lives; template-*.img: fresh file systems copied for each one
 * </pre>
 */
public record DataLayout(Path dataDir) {
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

  public Path runFiles(String runId) {
    return runsDir().resolve(runId).resolve("files");
  }

  public Path instancesDir() {
    return dataDir.resolve("instances");
  }

  /** Where the server's own native library is written and loaded from. */
  public Path nativeDir() {
    return dataDir.resolve("native");
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
