package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.ProcessTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression tests for one host user shared by every sandbox (one session's 128 inotify instances
 * left none for the next; RLIMIT_NPROC and the other per-user kernel limits were shared too): when
 * the server runs as root, each live sandbox has a host uid of its own.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class SandboxUidTest {
  /** The default sandbox_uid_range. */
  private static final long FIRST = 2_000_000_000L;

  private static final long LAST = 2_000_065_535L;

  @TempDir Path dataDir;
  DefaultSandboxService service;

  @AfterEach
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  private void startService(Map<String, String> settings) {
    assumeThat(HostUser.currentUid()).as("a uid per sandbox needs root").isZero();
    service = TestServices.start(dataDir, TestServices.withoutImportPolicy(dataDir, settings));
  }

  private RunRecord run(String session, String code) {
    RunRecord r = service.run(new ExecutionRequest(code, session, null, 30));
    assertThat(r.status()).as(r.message() + "\n" + r.stderr()).isEqualTo(RunStatus.SUCCEEDED);
    return r;
  }

  @Test
  void oneSessionsInotifyInstances_leaveAnotherSessionItsOwn() {
    startService(Map.of("pool_size", "2"));
    RunRecord a =
        run(
            "a",
            "import ctypes\n"
                + "libc = ctypes.CDLL(None, use_errno=True)\n"
                + "try:\n"
                + "    limit = int(open('/proc/sys/fs/inotify/max_user_instances').read())\n"
                + "except OSError:\n"
                + "    limit = 128\n"
                + "held = []\n"
                + "while len(held) < limit:\n"
                + "    fd = libc.inotify_init1(0)\n"
                + "    if fd < 0:\n"
                + "        break\n"
                + "    held.append(fd)\n"
                + "print(len(held) == limit, len(held))");
    assertThat(a.stdout()).as("session a took every instance its user may have").startsWith("True");
    RunRecord b =
        run(
            "b",
            "import ctypes\n"
                + "libc = ctypes.CDLL(None, use_errno=True)\n"
                + "fd = libc.inotify_init1(0)\n"
                + "print(fd >= 0, ctypes.get_errno())");
    assertThat(b.stdout()).as("inotify_init1 in session b").isEqualTo("True 0\n");
  }

  @Test
  void twoSandboxes_runAsTwoHostUidsFromTheRange_andOwnTheirFiles() throws Exception {
    startService(Map.of("pool_size", "2"));
    long uidA = hostUidOfSession("a");
    long uidB = hostUidOfSession("b");
    HostUser shared = HostUser.lookup("pysandbox").orElseThrow();
    assertThat(uidA).isNotEqualTo(uidB).isNotEqualTo(shared.uid()).isBetween(FIRST, LAST);
    assertThat(uidB).isNotEqualTo(shared.uid()).isBetween(FIRST, LAST);
    Path workspaceA = workspaceHolding("probe-a");
    assertThat(((Number) Files.getAttribute(workspaceA.resolve("probe-a"), "unix:uid")).longValue())
        .as("a file the code wrote")
        .isEqualTo(uidA);
    service.uploadFile(new UploadRequest("a", "up.txt", "x", null, false));
    assertThat(((Number) Files.getAttribute(workspaceA.resolve("up.txt"), "unix:uid")).longValue())
        .as("an uploaded file")
        .isEqualTo(uidA);
  }

  @Test
  void uidsLockedByAnotherServer_areSkipped_andARangeInUseSaysSo() throws Exception {
    long held = 2_000_100_000L;
    Path lock = Path.of("/run/pysandbox/uids/" + held);
    Files.createDirectories(lock.getParent());
    // Another server's allocation, as a POSIX lock held by another process.
    Process other =
        new ProcessBuilder(
                "/usr/bin/python3",
                "-c",
                "import fcntl, sys, time\n"
                    + "f = open(sys.argv[1], 'a')\n"
                    + "fcntl.lockf(f, fcntl.LOCK_EX)\n"
                    + "print('locked', flush=True)\n"
                    + "time.sleep(120)",
                lock.toString())
            .start();
    try {
      assertThat(new String(other.getInputStream().readNBytes(7))).isEqualTo("locked\n");
      startService(Map.of("pool_size", "0", "sandbox_uid_range", held + "-" + (held + 1)));
      assertThat(hostUidOfSession("a")).isEqualTo(held + 1);
      assertThatThrownBy(() -> service.run(new ExecutionRequest("1", "b", null, 30)))
          .hasMessageContaining("no free uid in sandbox_uid_range " + held + "-" + (held + 1));
      service.closeSession("a");
      awaitUnlocked(Path.of("/run/pysandbox/uids/" + (held + 1)));
      assertThat(hostUidOfSession("c")).as("released with its sandbox").isEqualTo(held + 1);
    } finally {
      other.destroyForcibly();
    }
  }

  /**
   * Starts a process with a marker in its command line in a session's sandbox, writes a file named
   * after the session, and reads the process's real uid on the host.
   */
  private long hostUidOfSession(String session) throws Exception {
    String marker = "uid-probe-" + session + "-" + dataDir.getFileName();
    run(
        session,
        "import subprocess, sys\n"
            + "open('probe-"
            + session
            + "', 'w').write('x')\n"
            + "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '"
            + marker
            + "'])");
    List<Long> pids =
        Await.until(
            "the probe process of session " + session,
            () -> ProcessTable.withCommandLineContaining(marker),
            found -> !found.isEmpty());
    assertThat(pids).as("the probe process of session " + session).hasSize(1);
    for (String line : Files.readAllLines(Path.of("/proc/" + pids.get(0) + "/status"))) {
      if (line.startsWith("Uid:")) {
        return Long.parseLong(line.substring(4).trim().split("\\s+")[0]);
      }
    }
    throw new AssertionError("no Uid line for " + pids.get(0));
  }

  /** Waits until no process holds a POSIX lock on the file (per /proc/locks). */
  private static void awaitUnlocked(Path file) throws Exception {
    long inode = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
    Await.untilChecked(
        file + " unlocked (per /proc/locks)",
        () ->
            Files.readAllLines(Path.of("/proc/locks")).stream()
                .map(l -> l.trim().split("\\s+"))
                .anyMatch(f -> f.length > 5 && f[5].endsWith(":" + inode)),
        locked -> !locked);
  }

  private Path workspaceHolding(String name) throws IOException {
    try (Stream<Path> dirs = Files.list(dataDir.resolve("sandbox/workspaces"))) {
      return dirs.filter(d -> Files.exists(d.resolve(name))).findFirst().orElseThrow();
    }
  }
}
