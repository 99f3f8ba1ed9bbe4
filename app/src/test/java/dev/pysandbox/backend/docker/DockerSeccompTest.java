package dev.pysandbox.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.model.Version;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container profile as written by seccomp_filter.py {@code --docker}, read back and evaluated
 * rule by rule the way libseccomp does (every comparison of a rule must hold; no rule: the default
 * action). Each call is checked to be matched by at most one rule, so the profile never depends on
 * rule order. The generator needs /usr/bin/python3 with python3-seccomp (scripts/setup.sh).
 */
@Sandboxed
class DockerSeccompTest {
  static final Path PYTHON = Path.of("/usr/bin/python3");
  static final long EPERM = 1, ENOSYS = 38, EAFNOSUPPORT = 97;
  static final long AF_UNIX = 1, AF_INET = 2, AF_INET6 = 10, AF_NETLINK = 16, AF_PACKET = 17;
  static final long AF_VSOCK = 40, NETLINK_AUDIT = 9, CLONE_NEWUSER = 0x10000000, SIGCHLD = 17;

  @TempDir static Path dataDir;
  static DataLayout layout;
  static JsonNode plain;
  static JsonNode net;
  static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void generate() throws IOException {
    layout = new DataLayout(dataDir);
    plain = JSON.readTree(DockerSeccomp.profile(PYTHON, layout, false));
    net = JSON.readTree(DockerSeccomp.profile(PYTHON, layout, true));
  }

  @Test
  void profile_isAnAllowList_forTheHostArchitecture_inDockersFormat() {
    for (JsonNode p : List.of(plain, net)) {
      assertThat(p.get("defaultAction").asText()).isEqualTo("SCMP_ACT_ERRNO");
      assertThat(p.get("defaultErrnoRet").asLong()).isEqualTo(ENOSYS);
      String arch = System.getProperty("os.arch").equals("aarch64") ? "AARCH64" : "X86_64";
      assertThat(p.get("architectures")).hasSize(1);
      assertThat(p.get("architectures").get(0).asText()).isEqualTo("SCMP_ARCH_" + arch);
      for (JsonNode rule : p.get("syscalls")) {
        assertThat(rule.get("names")).isNotEmpty();
        assertThat(rule.get("action").asText()).isIn("SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO");
        assertThat(rule.has("errnoRet")).isEqualTo(rule.get("action").asText().endsWith("ERRNO"));
        for (JsonNode a : rule.path("args")) {
          assertThat(a.fieldNames()).toIterable().containsOnly("index", "value", "valueTwo", "op");
          assertThat(a.get("op").asText()).startsWith("SCMP_CMP_");
        }
      }
    }
  }

  @Test
  void whatAPythonAndTheRuntimeNeed_isAllowed() {
    for (JsonNode p : List.of(plain, net)) {
      for (String name :
          List.of(
              "execve",
              "read",
              "write",
              "openat",
              "close",
              "mmap",
              "mprotect",
              "brk",
              "futex",
              "rt_sigaction",
              "rt_sigreturn",
              "exit_group",
              "wait4",
              "pipe2",
              "dup2",
              "getdents64",
              "newfstatat",
              "statx",
              "ioctl",
              "prctl",
              "capset",
              "setresuid",
              "setgroups",
              "sched_getaffinity",
              "getrandom",
              "rseq",
              "set_robust_list",
              "arch_prctl",
              "close_range",
              "epoll_pwait",
              "sendmsg",
              "recvmsg",
              "connect",
              "vfork")) {
        assertThat(decide(p, name)).as(name).isEqualTo("ALLOW");
      }
      // fork, threads (no namespace flags), a subprocess's fcntl and a regular file's mknod
      assertThat(decide(p, "clone", SIGCHLD)).isEqualTo("ALLOW");
      assertThat(decide(p, "clone", 0x3d0f00)).isEqualTo("ALLOW");
      assertThat(decide(p, "fcntl", 3, 1)).isEqualTo("ALLOW"); // F_GETFD
      assertThat(decide(p, "mknodat", -100, 0, 0100644)).isEqualTo("ALLOW");
      assertThat(decide(p, "socket", AF_UNIX, 1)).isEqualTo("ALLOW");
      assertThat(decide(p, "socketpair", AF_UNIX, 1)).isEqualTo("ALLOW");
      assertThat(decide(p, "personality", 0xffffffffL)).isEqualTo("ALLOW");
    }
  }

  @Test
  void everySyscallOurFilterRefuses_isRefusedWithTheSameErrno() throws IOException {
    List<String> denied = deniedByOurFilter();
    assertThat(denied).contains("ptrace", "mount", "unshare", "keyctl", "bpf", "io_uring_setup");
    for (JsonNode p : List.of(plain, net)) {
      for (String name : denied) {
        assertThat(decide(p, name)).as(name).isEqualTo("ERRNO " + EPERM);
      }
      assertThat(decide(p, "clone3")).isEqualTo("ERRNO " + ENOSYS); // the default: not listed
      assertThat(decide(p, "clone", CLONE_NEWUSER | SIGCHLD)).isEqualTo("ERRNO " + EPERM);
      assertThat(decide(p, "clone", 0x40000000L | SIGCHLD)).isEqualTo("ERRNO " + EPERM); // NEWNET
      assertThat(decide(p, "clone", 0x00000080L)).isEqualTo("ERRNO " + EPERM); // NEWTIME
      assertThat(decide(p, "mknodat", -100, 0, 0010644)).isEqualTo("ERRNO " + EPERM); // FIFO
      assertThat(decide(p, "mknod", 0, 0010600)).isEqualTo("ERRNO " + EPERM);
      assertThat(decide(p, "fcntl", 3, 1024)).isEqualTo("ERRNO " + EPERM); // F_SETLEASE
    }
  }

  @Test
  void whatTheEnginesDefaultsRefuse_isRefusedToo() {
    for (JsonNode p : List.of(plain, net)) {
      for (String name :
          List.of("vmsplice", "userfaultfd", "sethostname", "get_mempolicy", "uselib", "swapon")) {
        assertThat(decide(p, name)).as(name).isEqualTo("ERRNO " + EPERM);
      }
      assertThat(decide(p, "personality", 0x0040000)).isEqualTo("ERRNO " + ENOSYS);
      assertThat(decide(p, "some_syscall_newer_than_the_list")).isEqualTo("ERRNO " + ENOSYS);
      assertThat(decide(p, "socket", AF_VSOCK, 1)).isEqualTo("ERRNO " + EAFNOSUPPORT);
      assertThat(decide(p, "socket", AF_NETLINK, 3, NETLINK_AUDIT))
          .isEqualTo("ERRNO " + EAFNOSUPPORT);
    }
  }

  @Test
  void networkVariant_allowsInternetSockets_andOnlyThose() {
    for (long family : new long[] {AF_INET, AF_INET6}) {
      assertThat(decide(plain, "socket", family, 1)).isEqualTo("ERRNO " + EAFNOSUPPORT);
      assertThat(decide(net, "socket", family, 1)).isEqualTo("ALLOW");
    }
    assertThat(decide(plain, "socket", AF_NETLINK, 3, 0)).isEqualTo("ERRNO " + EAFNOSUPPORT);
    assertThat(decide(net, "socket", AF_NETLINK, 3, 0)).isEqualTo("ALLOW"); // NETLINK_ROUTE
    assertThat(decide(plain, "socketpair", AF_INET, 1)).isEqualTo("ERRNO " + EAFNOSUPPORT);
    for (long family = 0; family < 64; family++) {
      String expected =
          family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK
              ? "ALLOW"
              : "ERRNO " + EAFNOSUPPORT;
      assertThat(decide(net, "socket", family, 1, 0)).as("family %d", family).isEqualTo(expected);
    }
    assertThat(decide(net, "socket", AF_PACKET, 3)).isEqualTo("ERRNO " + EAFNOSUPPORT);
    assertThat(decide(net, "socket", -1L, 1)).isEqualTo("ERRNO " + EAFNOSUPPORT);
    assertThat(plain).isNotEqualTo(net);
  }

  @Test
  void profile_isGeneratedOncePerDataDirectory_andCarriesTheGeneratorsHash() throws IOException {
    Path file = DockerSeccomp.profileFile(PYTHON, layout, false);
    assertThat(file.getFileName().toString()).matches("seccomp_filter-[0-9a-f]{16}-docker\\.json");
    assertThat(file.getParent()).isEqualTo(layout.runtimeDir().toAbsolutePath());
    assertThat(DockerSeccomp.profileFile(PYTHON, layout, true).getFileName().toString())
        .endsWith("-docker-net.json");
    FileTime before = FileTime.fromMillis(1_000_000L);
    Files.setLastModifiedTime(file, before);
    assertThat(DockerSeccomp.profileFile(PYTHON, layout, false)).isEqualTo(file);
    assertThat(Files.getLastModifiedTime(file)).isEqualTo(before);
    assertThat(DockerSeccomp.profile(PYTHON, layout, false)).isEqualTo(Files.readString(file));
    try (var left = Files.list(layout.runtimeDir())) {
      assertThat(left.map(Path::getFileName).map(Path::toString)).noneMatch(n -> n.contains("tmp"));
    }
  }

  @Test
  void securityOpt_isTheJsonForDocker_andThePathForPodman() throws IOException {
    String inline = DockerSeccomp.securityOpt(PYTHON, layout, false, true);
    assertThat(inline).startsWith("seccomp={");
    assertThat(JSON.readTree(inline.substring("seccomp=".length()))).isEqualTo(plain);
    String path = DockerSeccomp.securityOpt(PYTHON, layout, true, false);
    assertThat(path)
        .isEqualTo("seccomp=" + DockerSeccomp.profileFile(PYTHON, layout, true).toString());
    assertThat(Path.of(path.substring("seccomp=".length()))).isAbsolute();

    Version podman =
        JSON.readValue(
            "{\"Version\":\"4.3.1\",\"Components\":[{\"Name\":\"Podman Engine\","
                + "\"Version\":\"4.3.1\"},{\"Name\":\"Conmon\"}]}",
            Version.class);
    Version docker =
        JSON.readValue(
            "{\"Version\":\"28.2.2\",\"Components\":[{\"Name\":\"Engine\",\"Version\":"
                + "\"28.2.2\"},{\"Name\":\"containerd\"},{\"Name\":\"runc\"}]}",
            Version.class);
    assertThat(DockerSeccomp.takesInlineProfile(podman)).isFalse();
    assertThat(DockerSeccomp.takesInlineProfile(docker)).isTrue();
  }

  /** The DENIED list of seccomp_filter.py: the names our BPF refuses outright. */
  static List<String> deniedByOurFilter() throws IOException {
    String script;
    try (InputStream in =
        DockerSeccomp.class.getResourceAsStream("/dev/pysandbox/backend/seccomp_filter.py")) {
      script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Matcher m = Pattern.compile("(?s)\nDENIED = \\[(.*?)\n\\]").matcher(script);
    assertThat(m.find()).isTrue();
    List<String> names = new ArrayList<>();
    Matcher q = Pattern.compile("\"([a-z0-9_]+)\"").matcher(m.group(1));
    while (q.find()) {
      names.add(q.group(1));
    }
    return names;
  }

  /**
   * What the profile does with {@code name(args...)}: "ALLOW" or "ERRNO n"; fails when two rules
   * match (the profile's rules for a call must be disjoint).
   */
  static String decide(JsonNode profile, String name, long... args) {
    List<String> matched = new ArrayList<>();
    for (JsonNode rule : profile.get("syscalls")) {
      boolean named = false;
      for (JsonNode n : rule.get("names")) {
        named |= n.asText().equals(name);
      }
      if (!named) {
        continue;
      }
      boolean all = true;
      for (JsonNode a : rule.path("args")) {
        long arg = a.get("index").asInt() < args.length ? args[a.get("index").asInt()] : 0;
        all &=
            holds(a.get("op").asText(), arg, unsigned(a.get("value")), unsigned(a.get("valueTwo")));
      }
      if (all) {
        matched.add(
            rule.get("action").asText().equals("SCMP_ACT_ALLOW")
                ? "ALLOW"
                : "ERRNO " + rule.get("errnoRet").asLong());
      }
    }
    assertThat(matched).as("rules matching %s%s", name, Arrays.toString(args)).hasSizeLessThan(2);
    return matched.isEmpty() ? "ERRNO " + profile.get("defaultErrnoRet").asLong() : matched.get(0);
  }

  static long unsigned(JsonNode n) {
    return n == null ? 0 : n.bigIntegerValue().longValue();
  }

  static boolean holds(String op, long arg, long value, long valueTwo) {
    return switch (op) {
      case "SCMP_CMP_EQ" -> arg == value;
      case "SCMP_CMP_NE" -> arg != value;
      case "SCMP_CMP_GT" -> Long.compareUnsigned(arg, value) > 0;
      case "SCMP_CMP_GE" -> Long.compareUnsigned(arg, value) >= 0;
      case "SCMP_CMP_LT" -> Long.compareUnsigned(arg, value) < 0;
      case "SCMP_CMP_LE" -> Long.compareUnsigned(arg, value) <= 0;
      case "SCMP_CMP_MASKED_EQ" -> (arg & value) == valueTwo;
      default -> throw new AssertionError("unknown op " + op);
    };
  }
}
