package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.core.files.TreeDeletion;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Code that attacks the server through its own workspace: FIFOs and leases against the server's
 * opens, trees too deep or too long for a path, links swapped in mid-walk, sparse files, files
 * rewritten while they are collected. The seccomp filter is off here, so that the code can make
 * FIFOs and take leases and the server's own defence is what is tested; {@code EscapeSuiteTest}
 * checks that the filter refuses them too. Workspace images are off for the same reason: the
 * measured quota (hosts without root or loop devices) is what is tested here; {@code
 * WorkspaceFileSystemTest} tests the enforced one. Every call that could hang is made with a
 * deadline, so a hang fails the test instead of blocking it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class WorkspaceAttackTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static ExecutorService calls;

  @BeforeAll
  static void start() {
    service =
        TestServices.start(
            dataDir,
            TestServices.withoutImportPolicy(
                dataDir,
                Map.of(
                    "seccomp",
                    "false",
                    "disk_quota_fs",
                    "off",
                    "pool_size",
                    "1",
                    "max_sessions",
                    "20")));
    calls =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "attack-test-call");
              t.setDaemon(true);
              return t;
            });
  }

  @AfterAll
  static void stop() {
    calls.shutdownNow();
    service.close();
    // Kept copies of files under paths longer than PATH_MAX: JUnit's clean-up goes by path.
    TreeDeletion.deleteTree(dataDir.resolve("runs"));
  }

  /** The call's answer, or a failure naming it when none comes within {@code seconds}. */
  static <T> T within(int seconds, String what, Callable<T> call) throws Exception {
    Future<T> f = calls.submit(call);
    try {
      return f.get(seconds, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      return fail(what + " did not answer within " + seconds + " s");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw new AssertionError(what + " threw " + e.getCause(), e.getCause());
    }
  }

  /** Closes a session at the end of a test, whether the test passed or not. */
  static void closeQuietly(String session) {
    try {
      within(30, "close_session", () -> service.closeSession(session));
    } catch (Exception | AssertionError e) {
      System.err.println("could not close " + session + ": " + e);
    }
  }

  static RunRecord run(String session, String code) throws Exception {
    return within(
        60, "run in " + session, () -> service.run(new ExecutionRequest(code, session, null, 30)));
  }

  static RunRecord oneShot(String code) throws Exception {
    return within(
        60, "one-shot run", () -> service.run(new ExecutionRequest(code, null, null, 30)));
  }

  static String session(Integer diskQuotaMb) {
    return service
        .createSession(null, null, new LimitRequest(null, null, null, diskQuotaMb))
        .sessionId();
  }

  /** The host directory that is this session's /mnt/data (found by a marker file in it). */
  static Path workspaceOf(String session) throws Exception {
    String marker = "marker-" + session;
    run(session, "open('" + marker + "', 'w').close()");
    try (Stream<Path> dirs = Files.list(dataDir.resolve("sandbox/workspaces"))) {
      return dirs.filter(d -> Files.exists(d.resolve(marker), LinkOption.NOFOLLOW_LINKS))
          .findFirst()
          .orElseThrow();
    }
  }

  static void assertRemovedSoon(Path dir) throws InterruptedException {
    Await.until(
        "the closed session's workspace " + dir + " removed",
        Duration.ofSeconds(20),
        () -> Files.exists(dir, LinkOption.NOFOLLOW_LINKS),
        exists -> !exists);
  }

  static long allocatedBytes(Path file) throws Exception {
    Process p =
        new ProcessBuilder("stat", "-c", "%b %B", file.toString())
            .redirectErrorStream(true)
            .start();
    String[] out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split(" ");
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    return Long.parseLong(out[0].strip()) * Long.parseLong(out[1].strip());
  }

  static String sha256(Path file) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) > 0; ) {
        md.update(buf, 0, n);
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  static long treeBytes(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
          .mapToLong(
              p -> {
                try {
                  return Files.size(p);
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
              })
          .sum();
    }
  }

  static ErrorCode codeOf(Throwable t) {
    return ((PysandboxException) t).code();
  }

  /** Python: starts {@code script} as a background process that outlives the run. */
  static String background(String script) {
    return "import subprocess, sys\n"
        + "subprocess.Popen([sys.executable, '-c', "
        + pythonString(script)
        + "], cwd='/mnt/data', start_new_session=True,"
        + " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n";
  }

  static String pythonString(String s) {
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'";
  }

  // -- FIFOs and leases against the server's opens ----------------------------------------------

  @Test
  void readArtifact_whileTheCodeSwapsAFileWithAFifo_alwaysAnswers_andTheNextRunFinishes()
      throws Exception {
    String id = session(null);
    try {
      RunRecord setup =
          run(
              id,
              "import os, time\nopen('a', 'w').write('hello')\nos.mkfifo('b')\n"
                  + background(
                      "import ctypes\nlibc = ctypes.CDLL(None)\n"
                          + "while True:\n    libc.renameat2(-100, b'a', -100, b'b', 2)\n")
                  + "time.sleep(0.5)\n"
                  + "kinds = set()\n"
                  + "for _ in range(200):\n"
                  + "    try:\n        kinds.add(os.lstat('a').st_mode >> 12)\n"
                  + "    except OSError:\n        pass\n"
                  + "    time.sleep(0.002)\n"
                  + "print(sorted(kinds))");
      assertThat(setup.stdout()).as("the swap runs: 'a' is seen as FIFO and file").contains("1, 8");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      int unanswered = 0;
      List<String> answers = new ArrayList<>();
      // Bursts of reads until there were 300 and both kinds were seen: on a loaded machine the
      // swapping process can be off the CPU for all of one burst, and 'a' one kind throughout it.
      while (unanswered == 0
          && System.nanoTime() - deadline < 0
          && (answers.size() < 300 || !answers.containsAll(List.of("hello", "forbidden")))) {
        List<Future<String>> reads = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          reads.add(
              calls.submit(
                  () -> {
                    try {
                      return service.readArtifact(null, id, "a", 1000).content();
                    } catch (PysandboxException e) {
                      return e.code().wireName();
                    }
                  }));
        }
        for (Future<String> f : reads) {
          try {
            answers.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
          } catch (TimeoutException e) {
            unanswered++;
          }
        }
      }
      assertThat(unanswered).as("read_artifact calls that never answered").isZero();
      assertThat(answers)
          .as("the file's content, or a refusal of the FIFO")
          .isSubsetOf("hello", "forbidden", "not_found")
          .contains("hello", "forbidden");
      for (int i = 0; i < 5; i++) {
        RunRecord next = run(id, "print(1)");
        assertThat(next.status()).as(next.message()).isEqualTo(RunStatus.SUCCEEDED);
      }
    } finally {
      closeQuietly(id);
    }
  }

  @Test
  void aLeaseOnAWorkspaceFile_neverHoldsTheServer() throws Exception {
    String id = session(null);
    try {
      RunRecord r =
          within(
              15,
              "the run after which the snapshot opens a leased file",
              () ->
                  service.run(
                      new ExecutionRequest(
                          "import os, time\nopen('leased.txt', 'w').write('x')\n"
                              + background(
                                  "import fcntl, os, signal, time\n"
                                      + "signal.signal(signal.SIGIO, signal.SIG_IGN)\n"
                                      + "fd = os.open('leased.txt', os.O_RDONLY)\n"
                                      + "fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)\n"
                                      + "open('ready', 'w').close()\n"
                                      + "time.sleep(600)\n")
                              + "while not os.path.exists('ready'):\n    time.sleep(0.01)\n"
                              + "print(open('/proc/locks').read())",
                          id,
                          null,
                          30)));
      assertThat(r.stdout()).as("the code holds a lease").contains("LEASE");
      assertThatThrownBy(
              () ->
                  within(
                      5,
                      "read_artifact of the leased file",
                      () -> service.readArtifact(null, id, "leased.txt", 1000)))
          .isInstanceOf(PysandboxException.class);
      RunRecord next = within(15, "the next run", () -> service.run(ExecutionRequest.of("1")));
      assertThat(next.status()).isEqualTo(RunStatus.SUCCEEDED);
    } finally {
      closeQuietly(id);
    }
  }

  // -- the workspace walk ------------------------------------------------------------------------

  @Test
  void aTree2100Deep_isAnswered_countedAgainstTheQuota_reported_andRemovedOnClose()
      throws Exception {
    String id = session(30);
    Path workspace = workspaceOf(id);
    try {
      // top.txt is written first: the quota may be measured, and the run killed, at any moment
      // after the first 30 MiB, so nothing the test relies on may come after the big writes.
      RunRecord r =
          run(
              id,
              "import os\nopen('top.txt', 'w').write('top')\n"
                  + "for _ in range(2100):\n    os.mkdir('d')\n    os.chdir('d')\n"
                  + "for n in ('x', 'y'):\n    open(n, 'wb').write(b'1' * 20_000_000)\n"
                  + "import time\ntime.sleep(30)");
      assertThat(r.status()).as("the run ended with a record").isNotEqualTo(RunStatus.RUNNING);
      assertThat(service.getRun(r.runId(), false).status()).isNotEqualTo(RunStatus.RUNNING);
      assertThat(r.killReason())
          .as("40 MB at depth 2100 count against 30 MiB")
          .isEqualTo(KillReason.DISK_QUOTA);
      assertThat(r.artifacts()).extracting(Artifact::path).contains("top.txt");
      assertThat(r.artifacts())
          .filteredOn(a -> a.skipped() != null && a.skipped().contains("deeper than"))
          .as("what lies too deep to list is reported")
          .isNotEmpty();
      within(30, "close_session", () -> service.closeSession(id));
      assertRemovedSoon(workspace);
    } finally {
      closeQuietly(id);
    }
  }

  @Test
  void pathsLongerThanPathMax_areListed_andTheWorkspaceIsRemovedOnClose() throws Exception {
    String id = session(null);
    Path workspace = workspaceOf(id);
    RunRecord r =
        run(
            id,
            "import os\nn = 'n' * 250\nfor _ in range(20):\n    os.mkdir(n)\n    os.chdir(n)\n"
                + "open('f.txt', 'w').write('far')");
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.artifacts())
        .singleElement()
        .satisfies(a -> assertThat(a.path()).hasSize(20 * 251 + 5).endsWith("/f.txt"));
    assertThat(service.listArtifacts(null, id).files())
        .extracting(f -> f.path())
        .anyMatch(p -> p.endsWith("/f.txt"));
    within(30, "close_session", () -> service.closeSession(id));
    assertRemovedSoon(workspace);
  }

  /**
   * {@code d} holds empty files named like the host's {@code /usr/bin}, and is swapped with a link
   * to it: a walk that lists {@code d} and then looks at {@code d/NAME} by path counts host files.
   */
  @Test
  void aDirectorySwappedForALinkDuringTheSizeWalk_isNeverFollowed() throws Exception {
    String id = session(20);
    try {
      RunRecord r =
          run(
              id,
              "import os, time\nos.mkdir('d')\n"
                  + "for n in os.listdir('/usr/bin'):\n"
                  + "    if os.path.isfile('/usr/bin/' + n):\n"
                  + "        open('d/' + n, 'w').close()\n"
                  + "os.symlink('/usr/bin', 'l')\n"
                  + background(
                      "import ctypes\nlibc = ctypes.CDLL(None)\n"
                          + "while True:\n    libc.renameat2(-100, b'd', -100, b'l', 2)\n")
                  + "time.sleep(6)");
      assertThat(r.status())
          .as("the host's /usr/bin is not counted as the workspace's: " + r.message())
          .isEqualTo(RunStatus.SUCCEEDED);
    } finally {
      closeQuietly(id);
    }
  }

  @Test
  void symlinksAndDirectories_countWhatTheyCost() throws Exception {
    String id = session(50);
    try {
      RunRecord r =
          run(
              id,
              "import os\nt = 'x' * 4000\n"
                  + "for i in range(15000):\n    os.symlink(t, f'l{i}')\n"
                  + "for i in range(5000):\n    os.mkdir(f'd{i}')\n");
      assertThat(r.killReason())
          .as("15,000 long links and 5,000 directories take ~79 MB: " + r.message())
          .isEqualTo(KillReason.DISK_QUOTA);
      assertThat(service.listSessions())
          .filteredOn(s -> s.sessionId().equals(id))
          .singleElement()
          .as("what the workspace takes, as the quota counts it (the run may be stopped early)")
          .satisfies(s -> assertThat(s.workspaceBytes()).isGreaterThan(50L << 20));
    } finally {
      closeQuietly(id);
    }
  }

  // -- reading and keeping files -----------------------------------------------------------------

  @Test
  void readArtifact_ofAHugeSparseFile_withAHugeLimit_isRefusedAtReadMaxBytes() throws Exception {
    String id = session(null);
    try {
      run(id, "open('big', 'wb').truncate(10**9)\nopen('small.txt', 'w').write('s')");
      assertThatThrownBy(
              () ->
                  within(
                      30,
                      "read_artifact of 1 GB",
                      () -> service.readArtifact(null, id, "big", Long.MAX_VALUE)))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.ARTIFACT_TOO_LARGE))
          .hasMessageContaining("read_max_bytes");
      assertThat(service.readArtifact(null, id, "small.txt", Long.MAX_VALUE).content())
          .isEqualTo("s");
    } finally {
      closeQuietly(id);
    }
  }

  @Test
  void sparseFiles_staySparseInTheRunsFiles() throws Exception {
    String id = session(null);
    try {
      RunRecord r =
          run(
              id,
              "with open('sparse', 'wb') as f:\n    f.truncate(300_000_000)\n"
                  + "    f.seek(100_000_000)\n    f.write(b'data')");
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      Path kept = blobOf(r, "sparse");
      assertThat(Files.size(kept)).isEqualTo(300_000_000);
      assertThat(allocatedBytes(kept)).as("blocks the kept copy takes").isLessThan(1 << 20);
      assertThat(r.artifacts())
          .singleElement()
          .satisfies(a -> assertThat(a.sha256()).isEqualTo(sha256(kept)));
    } finally {
      closeQuietly(id);
    }
  }

  @Test
  void aRunsKeptFiles_neverExceedTheDiskQuota() throws Exception {
    String id = session(20);
    try {
      RunRecord r =
          run(id, "for n in ('a', 'b', 'c'):\n    open(n, 'wb').write(b'1' * 15_000_000)\n");
      assertThat(r.killReason()).as(r.message()).isEqualTo(KillReason.DISK_QUOTA);
      long keptBytes = 0;
      for (Artifact a : r.artifacts()) {
        if (a.skipped() == null) {
          keptBytes += Files.size(blobOf(r, a.path()));
        }
      }
      assertThat(keptBytes).isLessThanOrEqualTo(20L << 20);
      assertThat(r.artifacts())
          .filteredOn(a -> a.skipped() != null)
          .as("what was not kept, and why")
          .isNotEmpty()
          .allSatisfy(a -> assertThat(a.skipped()).contains("quota"));
    } finally {
      closeQuietly(id);
    }
  }

  @Test
  void aFileRewrittenWhileCollected_isRecordedWithTheHashOfWhatWasKept() throws Exception {
    String id = session(null);
    try {
      run(
          id,
          background(
                  "import os\nfd = os.open('r', os.O_RDWR | os.O_CREAT)\n"
                      + "blocks = [bytes([65 + i]) * 4_000_000 for i in range(4)]\n"
                      + "i = 0\nwhile True:\n    os.pwrite(fd, blocks[i % 4], 0)\n    i += 1\n")
              + "import time\ntime.sleep(0.5)");
      int compared = 0;
      for (int i = 0; i < 15; i++) {
        RunRecord r = run(id, "pass");
        for (Artifact a : r.artifacts()) {
          if (a.path().equals("r") && a.sha256() != null) {
            Path kept = blobOf(r, "r");
            assertThat(sha256(kept)).as("the kept copy of run " + i).isEqualTo(a.sha256());
            compared++;
          }
        }
      }
      assertThat(compared).as("runs that kept the rewritten file").isGreaterThan(5);
    } finally {
      closeQuietly(id);
    }
  }

  @Test
  void aRunsKeptFiles_areRegularFilesWithoutSetuid_andTheRestIsReported() throws Exception {
    RunRecord r =
        oneShot(
            "import os\nopen('plain.txt', 'w').write('p')\n"
                + "open('suid', 'w').write('s')\nos.chmod('suid', 0o6755)\n"
                + "os.symlink('/etc/passwd', 'link')\nos.mkfifo('fifo')");
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.artifacts())
        .filteredOn(a -> a.skipped() == null)
        .extracting(Artifact::path)
        .containsExactlyInAnyOrder("plain.txt", "suid");
    // Kept by content in the blob store: a plain file, owner-only, never setuid or setgid.
    Path suid = blobOf(r, "suid");
    assertThat(Files.isRegularFile(suid, LinkOption.NOFOLLOW_LINKS)).isTrue();
    assertThat(allModeBits(suid) & 06077).as("setuid, setgid, group and other bits").isZero();
    assertThat(r.artifacts())
        .filteredOn(a -> a.skipped() != null)
        .extracting(Artifact::path)
        .containsExactlyInAnyOrder("link", "fifo");
    String s = session(null);
    try {
      RunRecord inSession = run(s, "import os\nos.mkfifo('p')\nos.symlink('/etc', 'e')");
      assertThat(inSession.artifacts())
          .extracting(Artifact::path, a -> a.skipped() != null)
          .containsExactlyInAnyOrder(
              org.assertj.core.groups.Tuple.tuple("e", true),
              org.assertj.core.groups.Tuple.tuple("p", true));
      assertThat(run(s, "pass").artifacts()).as("reported once, when they appear").isEmpty();
    } finally {
      closeQuietly(s);
    }
  }

  static int allModeBits(Path p) throws IOException {
    return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
  }

  /** Where a run's kept file is: the blob store, by its content's sha256. */
  private Path blobOf(RunRecord r, String path) {
    return KeptBlobPaths.of(dataDir, r, path);
  }
}
