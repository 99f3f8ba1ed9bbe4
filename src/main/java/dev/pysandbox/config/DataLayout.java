package dev.pysandbox.config;

import java.nio.file.Path;

/**
 * Where everything lives under the data directory. One place, so that the store, the backend and
 * the faces agree, and start-up hygiene knows what to look at.
 *
 * <pre>
 * data_dir/
 *   pysandbox.db            run history (SQLite)
 *   config.properties       optional settings
 *   runs/RUN_ID/files/      files a one-shot run left in its workspace
 *   instances/ID.lock       held by each live server process; a free lock means a dead one
 *   run/io-PID.sock         the worker hub's socket (private to the server's user)
 *   sandbox/                what sandboxes may see (bind-mounted, never whole)
 *     lib/                  runner.py by content hash, a stub /etc
 *     workspaces/SANDBOX_ID/  one sandbox's /mnt/data
 * </pre>
 */
public record DataLayout(Path dataDir) {
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
}
