package dev.pysandbox.e2e;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import dev.pysandbox.Docker;
import dev.pysandbox.backend.docker.DockerSeccomp;
import dev.pysandbox.config.DataLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container seccomp profile ({@link DockerSeccomp}) on a real engine: Podman's Docker API from
 * {@code scripts/podman-service.sh} with the image of {@code scripts/build-image.sh}, as in {@link
 * DockerEngineIT}. A container confined as the backend will confine it (user 1000, cap-drop ALL,
 * no-new-privileges, network none, read-only root, limits) starts with the profile, runs numpy,
 * pandas and matplotlib, and is refused what the bwrap filter refuses, with the same errno; the
 * network variant lets it make Internet sockets. Without the profile (the engine's default) the
 * same container may make a FIFO and take a lease, which shows the profile was applied.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Docker
class DockerSeccompIT {
  static final Path PYTHON = Path.of("/usr/bin/python3");

  /**
   * Prints a JSON object: for each probe, "ok" or the errno's name. Syscalls made through ctypes
   * with the numbers of x86_64 and aarch64, so that the C library's fallbacks do not hide them.
   */
  static final String PROBE =
      String.join(
          "\n",
          "import ctypes, errno, fcntl, json, os, platform, socket, subprocess",
          "NR = {'x86_64': dict(unshare=272, mount=165, ptrace=101, keyctl=250, clone=56,",
          "                     io_uring_setup=425, bpf=321, personality=135),",
          "      'aarch64': dict(unshare=97, mount=40, ptrace=117, keyctl=219, clone=220,",
          "                      io_uring_setup=425, bpf=280, personality=92)}[platform.machine()]",
          "libc = ctypes.CDLL(None, use_errno=True)",
          "libc.syscall.restype = ctypes.c_long",
          "def raw(name, *args):",
          "    return libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) for a in args])",
          "def sc(name, *args):",
          "    r = raw(name, *args)",
          "    return 'ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]",
          "def err(f):",
          "    try:",
          "        f(); return 'ok'",
          "    except OSError as e:",
          "        return errno.errorcode.get(e.errno, str(e.errno))",
          "out = {}",
          "status = dict(l.split(':\\t', 1) for l in open('/proc/self/status') if ':\\t' in l)",
          "out['seccomp_mode'] = status['Seccomp'].strip()",
          "out['uid'] = os.getuid()",
          "if os.environ.get('PROBE_HAZARDS') == '1':  # only where the profile refuses them",
          "    out['unshare_newuser'] = sc('unshare', 0x10000000)",
          "    out['ptrace_traceme'] = sc('ptrace', 0, 0, 0, 0)",
          "    r = raw('clone', 0x10000000 | 17, 0, 0, 0, 0)  # CLONE_NEWUSER | SIGCHLD",
          "    if r == 0:",
          "        os._exit(0)",
          "    out['clone_newuser'] = 'ok' if r > 0 and os.waitpid(r, 0) else"
              + " errno.errorcode[ctypes.get_errno()]",
          "    out['mount'] = sc('mount', 0, 0, 0, 0, 0)",
          "    out['keyctl'] = sc('keyctl', 0, 0, 0, 0)",
          "    out['bpf'] = sc('bpf', 0, 0, 0)",
          "    out['io_uring_setup'] = sc('io_uring_setup', 1, 0)",
          "    out['personality_addr_no_randomize'] = sc('personality', 0x0040000)",
          "out['socket_unix'] = err(lambda: socket.socket(socket.AF_UNIX).close())",
          "out['socket_inet'] = err(lambda: socket.socket(socket.AF_INET).close())",
          "out['socket_inet6'] = err(lambda: socket.socket(socket.AF_INET6).close())",
          "out['socket_vsock'] = err(lambda: socket.socket(40, socket.SOCK_STREAM).close())",
          "out['mkfifo'] = err(lambda: os.mkfifo('/tmp/fifo'))",
          "fd = os.open('/tmp/leased', os.O_CREAT | os.O_RDONLY, 0o600)",
          "out['fcntl_setlease'] = err(lambda: fcntl.fcntl(fd, 1024, fcntl.F_RDLCK))",
          "out['subprocess'] = subprocess.run(['python3', '-c', 'print(6 * 7)'],"
              + " capture_output=True, text=True).stdout.strip()",
          "import numpy, pandas, matplotlib",
          "matplotlib.use('Agg')",
          "import matplotlib.pyplot as plt",
          "df = pandas.DataFrame({'x': numpy.arange(50), 'y': numpy.arange(50) ** 2})",
          "df.plot(x='x', y='y'); plt.savefig('/tmp/plot.png')",
          "out['plot_bytes'] = os.path.getsize('/tmp/plot.png')",
          "print(json.dumps(out))");

  @TempDir static Path dataDir;

  static String dockerHost;
  static String image;
  static DockerClient docker;
  static boolean inline;
  static DataLayout layout;
  static final String instance = "it-seccomp-" + UUID.randomUUID();
  static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  @Timeout(value = 900, unit = TimeUnit.SECONDS) // a cold image build: debootstrap, then import
  static void startEngine() throws Exception {
    dev.pysandbox.TestEngine engine = dev.pysandbox.TestEngine.get();
    dockerHost = engine.dockerHost();
    image = engine.image();
    docker = engine.newClient();
    inline = DockerSeccomp.takesInlineProfile(docker.versionCmd().exec());
    layout = new DataLayout(dataDir);
  }

  @AfterAll
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  static void stopEngine() throws Exception {
    if (docker != null) {
      for (Container c :
          docker
              .listContainersCmd()
              .withShowAll(true)
              .withLabelFilter(Map.of("dev.pysandbox.instance", instance))
              .exec()) {
        docker.removeContainerCmd(c.getId()).withForce(true).exec();
      }
      docker.close();
    }
  }

  @Test
  void profile_refusesWhatOurFilterRefuses_withTheSameErrno_andPandasStillPlots() throws Exception {
    Map<String, Object> out = probe(DockerSeccomp.securityOpt(PYTHON, layout, false, inline), true);

    assertThat(out).containsEntry("seccomp_mode", "2").containsEntry("uid", 1000);
    assertThat(out)
        .containsEntry("unshare_newuser", "EPERM")
        .containsEntry("ptrace_traceme", "EPERM")
        .containsEntry("clone_newuser", "EPERM")
        .containsEntry("mount", "EPERM")
        .containsEntry("keyctl", "EPERM")
        .containsEntry("bpf", "EPERM")
        .containsEntry("io_uring_setup", "EPERM")
        .containsEntry("mkfifo", "EPERM")
        .containsEntry("fcntl_setlease", "EPERM");
    assertThat(out)
        .containsEntry("socket_unix", "ok")
        .containsEntry("socket_inet", "EAFNOSUPPORT")
        .containsEntry("socket_inet6", "EAFNOSUPPORT")
        .containsEntry("socket_vsock", "EAFNOSUPPORT");
    // What the engines' defaults refuse and ours does not: refused as the defaults do.
    assertThat(out).containsEntry("personality_addr_no_randomize", "ENOSYS");
    assertThat(out).containsEntry("subprocess", "42");
    assertThat((Integer) out.get("plot_bytes")).isGreaterThan(1000);
  }

  @Test
  void networkVariant_letsInternetSocketsBeMade_andRefusesTheRest() throws Exception {
    Map<String, Object> out = probe(DockerSeccomp.securityOpt(PYTHON, layout, true, inline), true);

    assertThat(out).containsEntry("seccomp_mode", "2");
    assertThat(out)
        .containsEntry("socket_unix", "ok")
        .containsEntry("socket_inet", "ok")
        .containsEntry("socket_inet6", "ok")
        .containsEntry("socket_vsock", "EAFNOSUPPORT");
    assertThat(out)
        .containsEntry("unshare_newuser", "EPERM")
        .containsEntry("ptrace_traceme", "EPERM")
        .containsEntry("clone_newuser", "EPERM")
        .containsEntry("mount", "EPERM")
        .containsEntry("mkfifo", "EPERM");
    assertThat((Integer) out.get("plot_bytes")).isGreaterThan(1000);
  }

  @Test
  void withoutTheProfile_theEnginesDefaultAllowsFifosAndLeases() throws Exception {
    // Control: the same container under the engine's default profile. (Unshare, ptrace and clone
    // are not probed there: Podman's default allows them, and a traced PID 1 can hang.)
    Map<String, Object> out = probe(null, false);

    assertThat(out).containsEntry("seccomp_mode", "2");
    assertThat(out).containsEntry("mkfifo", "ok").containsEntry("fcntl_setlease", "ok");
  }

  @Test
  void podman_refusesAnInlineProfile_soItIsGivenThePath() {
    if (inline) {
      return; // Docker: the inline form is the one used above
    }
    String json = DockerSeccomp.profile(PYTHON, layout, false);
    HostConfig host = confined().withSecurityOpts(List.of("no-new-privileges", "seccomp=" + json));
    assertThatThrownBy(() -> create(host, "true"))
        .hasMessageContaining("opening seccomp profile failed");
    assertThat(DockerSeccomp.securityOpt(PYTHON, layout, false, false))
        .isEqualTo("seccomp=" + DockerSeccomp.profileFile(PYTHON, layout, false));
  }

  /** Runs PROBE confined, with {@code seccomp} (a SecurityOpt entry; null: the engine default). */
  static Map<String, Object> probe(String seccomp, boolean hazards) throws Exception {
    List<String> opts = new ArrayList<>(List.of("no-new-privileges"));
    if (seccomp != null) {
      opts.add(seccomp);
    }
    String id =
        create(
            confined().withSecurityOpts(opts),
            List.of("PROBE_HAZARDS=" + (hazards ? "1" : "0"), "HOME=/tmp", "MPLCONFIGDIR=/tmp"),
            "python3",
            "-c",
            PROBE);
    long t0 = System.nanoTime();
    docker.startContainerCmd(id).exec();
    int exit =
        docker
            .waitContainerCmd(id)
            .exec(new WaitContainerResultCallback())
            .awaitStatusCode(120, TimeUnit.SECONDS);
    String printed = logs(id);
    System.out.printf(
        "probe (%s): %d ms%n  %s%n",
        seccomp == null ? "engine default" : seccomp.substring(0, Math.min(80, seccomp.length())),
        (System.nanoTime() - t0) / 1_000_000,
        printed.strip());
    docker.removeContainerCmd(id).withForce(true).exec();
    assertThat(exit).as(printed).isZero();
    String last = printed.strip().lines().reduce((a, b) -> b).orElse("{}");
    @SuppressWarnings("unchecked")
    Map<String, Object> out = JSON.readValue(last, Map.class);
    return out;
  }

  static HostConfig confined() {
    return HostConfig.newHostConfig()
        .withNetworkMode("none")
        .withCapDrop(Capability.ALL)
        .withReadonlyRootfs(true)
        .withTmpFs(Map.of("/tmp", "rw,nosuid,nodev,size=64m"))
        .withPidsLimit(64L)
        .withMemory(512L * 1024 * 1024)
        .withMemorySwap(512L * 1024 * 1024);
  }

  static String create(HostConfig host, String... cmd) {
    return create(host, List.of(), cmd);
  }

  static String create(HostConfig host, List<String> env, String... cmd) {
    return docker
        .createContainerCmd(image)
        .withHostConfig(host)
        .withUser("1000:1000")
        .withWorkingDir("/tmp")
        .withEnv(env)
        .withLabels(Map.of("dev.pysandbox.instance", instance))
        .withCmd(cmd)
        .exec()
        .getId();
  }

  static String logs(String id) throws InterruptedException {
    StringBuilder out = new StringBuilder();
    docker
        .logContainerCmd(id)
        .withStdOut(true)
        .withStdErr(true)
        .exec(
            new ResultCallback.Adapter<Frame>() {
              @Override
              public void onNext(Frame frame) {
                synchronized (out) {
                  out.append(new String(frame.getPayload(), UTF_8));
                }
              }
            })
        .awaitCompletion(30, TimeUnit.SECONDS);
    return out.toString();
  }
}
