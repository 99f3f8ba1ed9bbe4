package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

/**
 * The BPF program bwrap loads with {@code --seccomp} (see seccomp_filter.py for what it refuses).
 */
final class SeccompFilter {
  private SeccompFilter() {}

  /**
   * The seccomp filter, generated with libseccomp's Python binding the first time a version of the
   * generator runs in this data directory ({@code seccomp_filter-<hash>.bpf}, written under a
   * temporary name and renamed, so that servers sharing the directory never read half a file).
   * Fails closed: with seccomp on and no way to build the filter, no sandbox starts.
   */
  static Path build(Path python, DataLayout layout, String instanceId) {
    return build(python, layout, instanceId, false);
  }

  /**
   * The filter; with {@code network}, the variant that lets Internet sockets be made, for sandboxes
   * with a way out through the egress proxy (their network namespace still has only loopback).
   */
  static Path build(Path python, DataLayout layout, String instanceId, boolean network) {
    try {
      String script =
          SandboxFiles.installScript(
              "/dev/pysandbox/backend/bwrap/seccomp_filter.py", "seccomp_filter", layout.libDir());
      Path out = layout.runtimeDir().resolve(script.replace(".py", network ? "-net.bpf" : ".bpf"));
      if (Files.isRegularFile(out) && Files.size(out) > 0) {
        return out;
      }
      Path tmp = layout.runtimeDir().resolve(out.getFileName() + ".tmp-" + instanceId);
      Process p =
          new ProcessBuilder(
                  python.toString(),
                  "-I",
                  layout.libDir().resolve(script).toString(),
                  tmp.toString(),
                  network ? "--net" : "--no-net")
              .redirectErrorStream(true)
              .start();
      String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      boolean built = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
      if (!built || !Files.isRegularFile(tmp) || Files.size(tmp) == 0) {
        p.destroyForcibly();
        Files.deleteIfExists(tmp);
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE,
            "bwrap: cannot build the seccomp filter"
                + (printed.contains("No module named 'seccomp'")
                    ? ": libseccomp's Python binding is missing (Debian: apt-get install"
                        + " python3-seccomp; scripts/setup.sh does)"
                    : ": " + printed.strip())
                + "; or set seccomp=false to run without it");
      }
      Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      return out;
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "bwrap: cannot build the seccomp filter: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "bwrap: interrupted building the seccomp filter", e);
    }
  }
}
