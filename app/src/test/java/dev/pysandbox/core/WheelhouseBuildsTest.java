package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.packages.TinyWheels;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds from a wheelhouse ({@code find_links}) as an operator leaves it: in a directory only root
 * may read (a temporary or home directory), beside a package index that cannot be reached. The
 * server, as root, runs builds as other users; it hands them the wheelhouse, and a failure on a
 * file of this host is never blamed on the index (issue 23, item 13).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Sandboxed
class WheelhouseBuildsTest {
  @TempDir Path dataDir;
  @TempDir Path home;

  private static RunRecord run(DefaultSandboxService s, String code, List<String> packages) {
    return s.run(new ExecutionRequest(code, null, null, 120, null, null, false, packages));
  }

  /** A package index URL nothing answers at (a port that was free a moment ago). */
  private static String deadIndex() throws Exception {
    try (ServerSocket free = new ServerSocket(0)) {
      return "http://127.0.0.1:" + free.getLocalPort() + "/simple";
    }
  }

  private DefaultSandboxService start(Path findLinks, String... more) throws Exception {
    Map<String, String> settings = new HashMap<>();
    settings.put("pool_size", "0");
    settings.put("index_url", deadIndex());
    settings.put("network_allow_private", "true");
    settings.put("find_links", findLinks.toString());
    for (int i = 0; i + 1 < more.length; i += 2) {
      settings.put(more[i], more[i + 1]);
    }
    return TestServices.start(dataDir, settings);
  }

  /** A wheelhouse only root may read: 0700, in {@code parent}, which gets {@code parentMode}. */
  private Path privateWheelhouse(String parentMode) throws Exception {
    Path wheels = home.resolve("wheels");
    Files.createDirectory(wheels);
    Files.setPosixFilePermissions(home, PosixFilePermissions.fromString(parentMode));
    Files.setPosixFilePermissions(wheels, PosixFilePermissions.fromString("rwx------"));
    return wheels;
  }

  private static void onlyOwnerReads(Path wheels) throws Exception {
    try (Stream<Path> s = Files.list(wheels)) {
      for (Path p : s.toList()) {
        if (Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        }
      }
    }
  }

  private List<String> leftCopies() throws Exception {
    try (Stream<Path> s = Files.list(dataDir.resolve("sandbox/envs"))) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".wheels-")).toList();
    }
  }

  /**
   * The case: a 0700 temporary directory (mktemp -d). Before, pip failed with "Permission
   * denied", reported as "the package index could not be reached; try again later", retryable.
   */
  @Test
  void aWheelhouseInA0700Directory_isHandedToTheBuild_evenWithTheIndexDown() throws Exception {
    buildsFrom(privateWheelhouse("rwxr-xr-x"));
  }

  /** Before, bwrap could not even reach it ("Can't find source path"): backend_unavailable. */
  @Test
  void aWheelhouseInA0700HomeDirectory_isHandedToTheBuild() throws Exception {
    buildsFrom(privateWheelhouse("rwx------"));
  }

  private void buildsFrom(Path wheels) throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "deppkg", "1.0", null, List.of("tinypkg"));
    onlyOwnerReads(wheels);
    // A link in it is never followed (the copy skips it).
    Path secret = Files.writeString(home.resolve("secret.whl"), "not a wheel");
    Files.createSymbolicLink(wheels.resolve("elsewhere.whl"), secret);
    try (DefaultSandboxService s = start(wheels)) {
      RunRecord r =
          run(s, "import deppkg, tinypkg; print(tinypkg.hello())", List.of("deppkg==1.0"));
      assertThat(r.status()).as(r.stderr()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout()).contains(TinyWheels.greeting("tinypkg", "1.0"));
      assertThat(leftCopies()).as("the build's copy of the wheelhouse goes with it").isEmpty();
    }
  }

  @Test
  void aWheelhouseTooLargeToHandOver_isRefusedNamingItAndTheLimit_notTheIndex() throws Exception {
    Path wheels = privateWheelhouse("rwx------");
    TinyWheels.build(wheels, "bigpkg", "1.0", "DATA = '" + noise(4 << 20) + "'\n");
    onlyOwnerReads(wheels);
    try (DefaultSandboxService s = start(wheels, "env_max_mb", "1")) {
      assertThatThrownBy(() -> run(s, "print(1)", List.of("bigpkg")))
          .isInstanceOfSatisfying(PysandboxException.class, WheelhouseBuildsTest::permanent)
          .hasMessageContaining("find_links = " + wheels)
          .hasMessageContaining("env_max_mb")
          .hasMessageContaining("chmod")
          .hasMessageNotContaining("index");
      assertThat(leftCopies()).isEmpty();
    }
  }

  /**
   * A real local fault in pip, with the index down: the data directory is a 32 MiB file system and
   * the package installs 40 MiB, so pip fails with ENOSPC. Before, the probes of the unreachable
   * index made it "the package index could not be reached; try again later", retryable.
   */
  @Test
  void pipFailingOnALocalFile_isNotBlamedOnTheIndex_andNamesPipsOwnLine() throws Exception {
    Path image = home.resolve("data.img");
    sh("truncate", "-s", "32M", image.toString());
    sh("mkfs.ext4", "-q", "-F", "-O", "^has_journal", image.toString());
    sh("mount", "-o", "loop,nodev,nosuid", image.toString(), dataDir.toString());
    try {
      Path wheels = home.resolve("open-wheels");
      Files.createDirectory(wheels);
      Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxr-xr-x"));
      TinyWheels.build(wheels, "hugepkg", "1.0", "DATA = '" + noise(40 << 20) + "'\n");
      try (DefaultSandboxService s = start(wheels, "disk_quota_fs", "off")) {
        assertThatThrownBy(() -> run(s, "print(1)", List.of("hugepkg")))
            .isInstanceOfSatisfying(PysandboxException.class, WheelhouseBuildsTest::permanent)
            .hasMessageContaining("not on the package index")
            .hasMessageContaining("[Errno 28] No space left on device")
            .hasMessageNotContaining("could not be reached");
      }
    } finally {
      new ProcessBuilder("umount", "-l", dataDir.toString()).start().waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** A build failure that no retry would mend. */
  private static void permanent(PysandboxException e) {
    assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.ENVIRONMENT_FAILED);
    assertThat(e.retryable()).as(e.getMessage()).isFalse();
  }

  /** Text that compresses badly, so that a wheel of it stays about as large. */
  private static String noise(int chars) {
    Random random = new Random(23);
    StringBuilder b = new StringBuilder(chars);
    for (int i = 0; i < chars; i++) {
      b.append((char) ('a' + random.nextInt(26)));
    }
    return b.toString();
  }

  private static void sh(String... argv) throws Exception {
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", argv) + ": " + out).isZero();
  }
}
