package dev.pysandbox.backend.bwrap;

import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.RunnerLaunch;
import dev.pysandbox.backend.SandboxSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bubblewrap command line of one sandbox: every namespace, an allow-list filesystem (read-only
 * system paths, a stub {@code /etc}, a size-capped tmpfs {@code /tmp}, the workspace at {@code
 * /mnt/data}, its tier's host directories read-only at {@code /mnt/host/<name>}), no capabilities,
 * a seccomp filter, a cleared environment and the runner as its only program, told its tier's
 * import policy on its command line.
 */
final class BwrapCommand {
  /** The uid and gid the code sees inside; unprivileged, and distinct from overflow 65534. */
  static final int SANDBOX_UID = 1000;

  static final String WORKSPACE = RunnerLaunch.WORKSPACE;
  static final String RUNNER = RunnerLaunch.RUNNER;
  static final String ANALYZER = RunnerLaunch.ANALYZER;
  static final String FORWARDER = RunnerLaunch.FORWARDER;

  /**
   * What a sandbox has beyond the common allow-list, as bwrap (running as the sandbox's user) can
   * reach it on the host.
   *
   * @param environment its package environment's directory, or {@code null}
   * @param egressSocket its door to the egress proxy, or {@code null} for no way out
   * @param forwarderName file name of the egress forwarder inside the library directory
   */
  record Extras(Path environment, Path egressSocket, String forwarderName) {
    static final Extras NONE = new Extras(null, null, null);
  }

  /** Host files the interpreter and the data stack read; each is bound only if present. */
  private static final List<String> HOST_ETC =
      List.of(
          "/etc/alternatives",
          "/etc/ld.so.cache",
          "/etc/localtime",
          "/etc/fonts",
          "/etc/matplotlibrc",
          "/etc/mime.types",
          "/etc/python3",
          "/etc/python3.11");

  private BwrapCommand() {}

  /**
   * @param workspace the workspace as bwrap (running as the sandbox user) can reach it
   * @param lib the library directory as bwrap can reach it (runner and stub /etc files)
   * @param runnerName file name of the runner inside {@code lib}
   * @param analyzerName file name of the code analyser inside {@code lib}
   * @param spec preloads, {@code /tmp}'s size, host directories and the import policy
   * @param seccomp true to load the seccomp filter the launcher opens on fd 5
   */
  static List<String> build(
      Path bwrap,
      InterpreterInfo python,
      Path workspace,
      Path lib,
      String runnerName,
      String analyzerName,
      SandboxSpec spec,
      boolean seccomp,
      Extras extras) {
    List<String> a = new ArrayList<>();
    a.add(bwrap.toString());
    add(a, "--unshare-user", "--disable-userns");
    add(a, "--uid", Integer.toString(SANDBOX_UID), "--gid", Integer.toString(SANDBOX_UID));
    add(a, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts");
    add(a, "--unshare-cgroup-try");
    add(a, "--ro-bind", "/usr", "/usr");
    add(a, "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64");
    add(a, "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin");
    for (String etc : HOST_ETC) {
      add(a, "--ro-bind-try", etc, etc);
    }
    for (String stub : List.of("passwd", "group", "hosts", "nsswitch.conf")) {
      add(a, "--ro-bind", lib.resolve("etc").resolve(stub).toString(), "/etc/" + stub);
    }
    for (Path p : interpreterPaths(python)) {
      add(a, "--ro-bind-try", p.toString(), p.toString());
    }
    add(a, "--proc", "/proc", "--dev", "/dev");
    add(a, "--size", Long.toString(spec.limits().tmpBytes()), "--tmpfs", "/tmp");
    // bwrap's /dev is a tmpfs bounded by nothing but memory, and /dev/shm a directory in it: a
    // tmpfs of its own, the size of /tmp, bounds what code (or shm_open) puts there.
    add(a, "--size", Long.toString(spec.limits().tmpBytes()), "--tmpfs", "/dev/shm");
    // The /dev tmpfs itself belongs to the sandbox's uid: read-only, so that nothing but its
    // device nodes (written through, as ever) and /dev/shm takes a write there.
    add(a, "--remount-ro", "/dev");
    add(a, "--bind", workspace.toString(), WORKSPACE);
    for (SandboxSpec.HostMount m : spec.mounts()) {
      // Read-only, nosuid and nodev, with whatever is mounted below it (bwrap binds recursively).
      add(a, "--ro-bind", m.source().toString(), m.target());
    }
    add(a, "--ro-bind", lib.resolve(runnerName).toString(), RUNNER);
    add(a, "--ro-bind", lib.resolve(analyzerName).toString(), ANALYZER);
    SandboxSpec.Environment env = spec.environment();
    if (env != null && extras.environment() != null) {
      add(
          a,
          env.writable() ? "--bind" : "--ro-bind",
          extras.environment().toString(),
          SandboxSpec.Environment.TARGET);
    }
    if (extras.egressSocket() != null) {
      // The system's CA certificates, so that TLS through the proxy (pip and HTTPS clients) can
      // check the hosts it reaches; public data, shown only to sandboxes with a way out.
      add(a, "--ro-bind-try", "/etc/ssl", "/etc/ssl");
      add(a, "--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates");
      add(a, "--bind", extras.egressSocket().toString(), SandboxSpec.Egress.SOCKET);
      add(a, "--ro-bind", lib.resolve(extras.forwarderName()).toString(), FORWARDER);
    }
    add(a, "--chdir", WORKSPACE);
    add(a, "--remount-ro", "/");
    add(a, "--hostname", "sandbox");
    add(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL");
    add(a, "--clearenv");
    for (Map.Entry<String, String> e : environment(env, extras.egressSocket() != null).entrySet()) {
      add(a, "--setenv", e.getKey(), e.getValue());
    }
    add(a, "--info-fd", "4");
    if (seccomp) {
      // The launcher opens the filter on fd 5; bwrap loads it just before it runs Python.
      add(a, "--seccomp", "5");
    }
    add(
        a,
        python.path().toString(),
        "-I",
        "-S",
        RUNNER,
        runnerOptions(python, spec, extras.egressSocket() != null));
    return List.copyOf(a);
  }

  /** The only environment the code sees: nothing of the server's. */
  static Map<String, String> environment() {
    return RunnerLaunch.environment(null, false);
  }

  static Map<String, String> environment(SandboxSpec.Environment packages, boolean egress) {
    return RunnerLaunch.environment(packages, egress);
  }

  /** Interpreter directories outside /usr (a Python built under /opt, say) must be bound too. */
  private static List<Path> interpreterPaths(InterpreterInfo python) {
    List<Path> extra = new ArrayList<>();
    Path usr = Path.of("/usr");
    for (Path p : List.of(python.basePrefix(), python.realExecutable().getParent())) {
      if (!p.startsWith(usr) && !extra.contains(p)) {
        extra.add(p);
      }
    }
    for (String entry : python.sysPath()) {
      Path p = Path.of(entry);
      if (!p.startsWith(usr) && extra.stream().noneMatch(p::startsWith)) {
        extra.add(p);
      }
    }
    return extra;
  }

  private static String runnerOptions(InterpreterInfo python, SandboxSpec spec, boolean egress) {
    return RunnerLaunch.options(python.sysPath(), spec, egress, null);
  }

  private static void add(List<String> argv, String... parts) {
    argv.addAll(List.of(parts));
  }
}
