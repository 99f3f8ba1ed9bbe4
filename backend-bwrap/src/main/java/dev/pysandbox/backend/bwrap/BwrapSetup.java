package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.BackendSetup;
import dev.pysandbox.backend.Cgroups;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.InterpreterProbe;
import dev.pysandbox.backend.SandboxFiles;
import dev.pysandbox.backend.SeccompFilter;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the bwrap backend finds once at set-up, and the finding: bwrap and the interpreter,
 * the host users sandboxes run as, the workspace file systems, the runner's files installed where
 * sandboxes read them, the seccomp filter and the cgroup hierarchy. The launcher is started by the
 * backend afterwards (it needs all of this).
 *
 * @param runAs the host user every sandbox runs as when {@code uids} is null; otherwise the
 *     launcher's fallback, or null
 * @param uids a host uid per sandbox, or null
 * @param runnerName and the other names: installed files (null when only inspecting)
 */
record BwrapSetup(
    InterpreterInfo python,
    HostUser runAs,
    SandboxUids uids,
    WorkspaceImages images,
    Path visibleRoot,
    String runnerName,
    String analyzerName,
    String launcherName,
    String forwarderName,
    Cgroups cgroups,
    Path seccompFilter)
    implements BackendSetup {
  private static final Logger log = LoggerFactory.getLogger(BwrapSetup.class);

  Path visibleLib() {
    return visibleRoot.resolve("lib");
  }

  Path visibleWorkspaces() {
    return visibleRoot.resolve("workspaces");
  }

  @Override
  public String users() {
    return uids != null
        ? "a uid of its own per sandbox, from " + uids.range()
        : runAs.name() + " (uid " + runAs.uid() + "), shared by every sandbox";
  }

  /**
   * Where sandboxes' directories appear to bwrap: the data directory's {@code sandbox/} itself, or,
   * when the server runs as root, the launcher's bind mount of it.
   */
  static Path visibleSandboxRoot(DataLayout layout, boolean serverIsRoot) {
    if (!serverIsRoot) {
      return layout.sandboxRoot();
    }
    String hash = Sha256.hex(layout.dataDir().toString());
    return DataLayout.STAGE_BASE.resolve(hash.substring(0, 12));
  }

  /**
   * Finds it all; with {@code inspectOnly}, only looks: installs nothing, builds no filter, makes
   * and joins no cgroup.
   *
   * @throws PysandboxException (BACKEND_UNAVAILABLE) naming what is missing
   */
  static BwrapSetup find(
      PysandboxConfig config, DataLayout layout, String instanceId, boolean inspectOnly) {
    Path bwrap = config.bwrap();
    if (!Files.isExecutable(bwrap)) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: "
              + bwrap
              + " not found: install bubblewrap (Debian: apt-get install bubblewrap)");
    }
    InterpreterInfo python = InterpreterProbe.probe(config.python());
    int uid = HostUser.currentUid();
    HostUser runAs;
    Path visibleRoot = layout.sandboxRoot();
    SandboxUids uids = null;
    if (uid == 0) {
      uids =
          config
              .sandboxUidRange()
              .map(inspectOnly ? SandboxUids::inspect : SandboxUids::open)
              .orElse(null);
      runAs = HostUser.lookup(config.sandboxUser()).orElse(null);
      if (runAs == null && uids == null) {
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE,
            "bwrap: the server runs as root and sandbox_uid_range is off, so sandboxes run as the"
                + " unprivileged user '"
                + config.sandboxUser()
                + "', which does not exist: create it with 'useradd --system"
                + " --no-create-home --shell /usr/sbin/nologin "
                + config.sandboxUser()
                + "' (scripts/setup.sh does), set PYSANDBOX_SANDBOX_USER, or set"
                + " sandbox_uid_range");
      }
      if (runAs != null && runAs.uid() == 0) {
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE, "bwrap: sandbox_user must not have uid 0");
      }
      visibleRoot = visibleSandboxRoot(layout, true);
    } else {
      runAs = new HostUser(System.getProperty("user.name"), uid, -1);
    }
    WorkspaceImages images = WorkspaceImages.detect(config.diskQuotaFs(), uid == 0, layout);
    if (inspectOnly) {
      Cgroups cgroups =
          config.cgroups() ? Cgroups.inspect() : Cgroups.disabled("turned off (cgroups=false)");
      return new BwrapSetup(
          python, runAs, uids, images, visibleRoot, null, null, null, null, cgroups, null);
    }
    String runnerName;
    String analyzerName;
    String launcherName;
    String forwarderName;
    try {
      Files.createDirectories(layout.runtimeDir());
      if (uid == 0) {
        Files.createDirectories(layout.imagesDir());
        Files.setPosixFilePermissions(
            layout.imagesDir(), PosixFilePermissions.fromString("rwx------"));
      }
      SandboxFiles.prepareSandboxRoot(layout);
      runnerName =
          SandboxFiles.installScript("/dev/pysandbox/worker/runner.py", "runner", layout.libDir());
      analyzerName =
          SandboxFiles.installScript(
              "/dev/pysandbox/worker/analyzer.py", "analyzer", layout.libDir());
      forwarderName =
          SandboxFiles.installScript(
              "/dev/pysandbox/worker/egress_forward.py", "egress_forward", layout.libDir());
      SandboxFiles.installEtc(layout.libDir());
      launcherName =
          SandboxFiles.installScript(
              "/dev/pysandbox/backend/bwrap/launcher.py", "launcher", layout.runtimeDir());
    } catch (IOException | UncheckedIOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: cannot prepare " + layout.sandboxRoot() + ": " + e.getMessage(),
          e);
    }
    Path filter = config.seccomp() ? SeccompFilter.build(python.path(), layout, instanceId) : null;
    Cgroups cgroups =
        config.cgroups()
            ? Cgroups.detect(layout.identity(), instanceId)
            : Cgroups.disabled("turned off (cgroups=false)");
    cgroups
        .unavailableReason()
        .ifPresent(
            why ->
                log.warn(
                    "no cgroup per sandbox ({}); memory and processes are bounded by rlimits only",
                    why));
    return new BwrapSetup(
        python,
        runAs,
        uids,
        images,
        visibleRoot,
        runnerName,
        analyzerName,
        launcherName,
        forwarderName,
        cgroups,
        filter);
  }
}
