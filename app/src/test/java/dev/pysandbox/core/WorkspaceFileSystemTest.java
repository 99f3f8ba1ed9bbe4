package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.backend.HostUser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression tests for the disk quota passed between runs (a detached writer put 172 MiB in a 20
 * MiB workspace, and the next innocent run was blamed): when the server runs as root, each
 * workspace is its own file system, bounded in bytes and inodes at all times.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Sandboxed
class WorkspaceFileSystemTest {
  private static final long MIB = 1024 * 1024;

  /** Started by a run, it writes after the run has returned: between runs, nothing watches. */
  private static final String BACKGROUND_WRITER =
      "import subprocess, sys\n"
          + "subprocess.Popen([sys.executable, '-c', '''\n"
          + "import time\n"
          + "time.sleep(0.5)\n"
          + "total, i, err = 0, 0, None\n"
          + "while total < 100 * 2**20:\n"
          + "    try:\n"
          + "        with open(f'/mnt/data/fill{i}', 'wb') as f:\n"
          + "            f.write(b'x' * 2**20)\n"
          + "    except OSError as e:\n"
          + "        err = e.errno\n"
          + "        break\n"
          + "    total += 2**20\n"
          + "    i += 1\n"
          + "open('/tmp/writer.log', 'w').write(f'wrote {total} errno {err}')\n"
          + "'''], start_new_session=True, stdin=subprocess.DEVNULL,\n"
          + "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
          + "print('started')";

  private static final String BACKGROUND_FILE_MAKER =
      "import subprocess, sys\n"
          + "subprocess.Popen([sys.executable, '-c', '''\n"
          + "import time\n"
          + "time.sleep(0.5)\n"
          + "n, err = 0, None\n"
          + "while n < 50000:\n"
          + "    try:\n"
          + "        open(f'/mnt/data/e{n}', 'x').close()\n"
          + "    except OSError as e:\n"
          + "        err = e.errno\n"
          + "        break\n"
          + "    n += 1\n"
          + "open('/tmp/maker.log', 'w').write(f'made {n} errno {err}')\n"
          + "'''], start_new_session=True, stdin=subprocess.DEVNULL,\n"
          + "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
          + "print('started')";

  @TempDir Path dataDir;
  DefaultSandboxService service;

  @BeforeEach
  void start() {
    assumeThat(HostUser.currentUid()).as("a file system per workspace needs root").isZero();
    service = TestServices.start(dataDir, Map.of("pool_size", "1", "cancel_grace", "1"));
  }

  @AfterEach
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  private RunRecord run(String session, String code) {
    return service.run(new ExecutionRequest(code, session, null, 60));
  }

  @Test
  void backgroundWriterBetweenRuns_isStoppedAtTheQuota_andTheNextRunIsNotBlamed() throws Exception {
    service.createSession("w", null, new LimitRequest(null, null, null, 20));
    run("w", "open('/mnt/data/mark-w', 'w').close()");
    RunRecord started = run("w", BACKGROUND_WRITER);
    assertThat(started.status()).as(started.message()).isEqualTo(RunStatus.SUCCEEDED);
    Path workspace = workspaceHolding("mark-w");
    long[] used = settledUsage(workspace);
    RunRecord innocent = run("w", "print('innocent')");
    RunRecord report = run("w", "print(open('/tmp/writer.log').read())");
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(used[0]).as("bytes in a 20 MiB workspace").isLessThanOrEqualTo(20 * MIB);
    soft.assertThat(innocent.status()).as(innocent.message()).isEqualTo(RunStatus.SUCCEEDED);
    soft.assertThat(innocent.killReason()).as("the next run is not blamed").isNull();
    soft.assertThat(report.stdout()).as("the writer was refused").contains("errno 28");
    soft.assertAll();
  }

  @Test
  void emptyFilesBetweenRuns_stopAtTheInodeBound() throws Exception {
    service.createSession("n", null, new LimitRequest(null, null, null, 20));
    run("n", "open('/mnt/data/mark-n', 'w').close()");
    RunRecord started = run("n", BACKGROUND_FILE_MAKER);
    assertThat(started.status()).as(started.message()).isEqualTo(RunStatus.SUCCEEDED);
    long[] used = settledUsage(workspaceHolding("mark-n"));
    RunRecord innocent = run("n", "print('innocent')");
    RunRecord report = run("n", "print(open('/tmp/maker.log').read())");
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(used[1]).as("files in a 20 MiB workspace").isLessThan(5_000);
    soft.assertThat(innocent.killReason()).as("the next run is not blamed").isNull();
    soft.assertThat(report.stdout()).as("the maker was refused").contains("errno 28");
    soft.assertAll();
  }

  @Test
  void workspace_takesUploadsAndGivesArtifacts_andClosingLeavesNoMountLoopOrImage()
      throws Exception {
    service.createSession("f", null, new LimitRequest(null, null, null, 20));
    service.uploadFile(new UploadRequest("f", "in.txt", "hello", null, false));
    RunRecord r =
        run("f", "data = open('/mnt/data/in.txt').read()\nopen('out.txt', 'w').write(data * 2)");
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(service.readArtifact(null, "f", "out.txt", 100).content()).isEqualTo("hellohello");
    assertThat(service.readArtifact(r.runId(), null, "out.txt", 100).content())
        .isEqualTo("hellohello");
    Path workspace = workspaceHolding("in.txt");
    assertThat(mountPointsUnder(dataDir)).as("the workspace is a mount point").contains(workspace);

    RunRecord oneShot = service.run(ExecutionRequest.of("open('kept.txt', 'w').write('kept')"));
    assertThat(service.readArtifact(oneShot.runId(), null, "kept.txt", 100).content())
        .isEqualTo("kept");

    service.closeSession("f");
    // Closing kills the sandbox and releases its workspace in the background.
    Await.until(workspace + " released", () -> Files.exists(workspace), exists -> !exists);
    assertThat(mountPointsUnder(dataDir)).doesNotContain(workspace);
    assertThat(workspace).doesNotExist();
    service.close();
    service = null;
    assertThat(mountPointsUnder(dataDir)).as("mounts left").isEmpty();
    assertThat(loopDevicesBackedBy(dataDir)).as("loop devices left").isEmpty();
    assertThat(imagesIn(dataDir)).as("images left").isEmpty();
  }

  @Test
  void start_afterACrash_unmountsAndDeletesTheDeadServersImages_ofThisDataDirectoryOnly(
      @TempDir Path otherDataDir) throws Exception {
    service.close();
    service = null;
    Path ours = leftover(dataDir, "sbx-deadbeef-1");
    Path theirs = leftover(otherDataDir, "sbx-deadbeef-1");
    // A spare image its launcher had made ahead (mounted in the launcher's namespace only).
    Files.createFile(dataDir.resolve("sandbox/images/spare-deadbeef-3.img"));
    Files.createDirectory(dataDir.resolve("sandbox/images/spare-deadbeef-3.mnt"));
    try {
      service = TestServices.start(dataDir, Map.of("pool_size", "0"));
      assertThat(mountPointsUnder(dataDir)).isEmpty();
      assertThat(ours).doesNotExist();
      assertThat(imagesIn(dataDir)).noneMatch(p -> p.toString().contains("deadbeef"));
      assertThat(mountPointsUnder(otherDataDir)).as("another data directory").contains(theirs);
      assertThat(imagesIn(otherDataDir)).hasSize(1);
    } finally {
      shQuietly("umount", "-l", theirs.toString());
      shQuietly("umount", "-l", ours.toString());
    }
  }

  // -- helpers --------------------------------------------------------------------------------

  /** What a crashed server leaves: an image loop-mounted on a workspace of a dead instance. */
  private static Path leftover(Path dataDir, String id) throws Exception {
    Path images = dataDir.resolve("sandbox/images");
    Path workspace = dataDir.resolve("sandbox/workspaces").resolve(id);
    Files.createDirectories(images);
    Files.createDirectories(workspace);
    Path image = images.resolve(id + ".img");
    sh("truncate", "-s", "8M", image.toString());
    sh("mkfs.ext4", "-q", "-F", "-O", "^has_journal", image.toString());
    sh("mount", "-o", "loop,nodev,nosuid", image.toString(), workspace.toString());
    Files.writeString(workspace.resolve("left.txt"), "x");
    return workspace;
  }

  private static void sh(String... argv) throws Exception {
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", argv) + ": " + out).isZero();
  }

  private static void shQuietly(String... argv) throws Exception {
    new ProcessBuilder(argv).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
  }

  /** The workspace directory (under the data directory) that holds a file of this name. */
  private Path workspaceHolding(String name) throws IOException {
    try (Stream<Path> dirs = Files.list(dataDir.resolve("sandbox/workspaces"))) {
      return dirs.filter(d -> Files.exists(d.resolve(name))).findFirst().orElseThrow();
    }
  }

  /**
   * Bytes and files in a workspace once a background writer has stopped (no change for 2 s, or past
   * 100 MiB or 50,000 files), seen from the host.
   */
  private static long[] settledUsage(Path workspace) throws Exception {
    long[] last = usage(workspace);
    long stableSince = System.nanoTime();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      Thread.sleep(250);
      long[] now = usage(workspace);
      if (now[0] != last[0] || now[1] != last[1]) {
        last = now;
        stableSince = System.nanoTime();
      } else if (System.nanoTime() - stableSince > TimeUnit.SECONDS.toNanos(2)
          && (last[0] > 0 || last[1] > 2)) {
        break;
      }
    }
    return last;
  }

  private static long[] usage(Path root) throws IOException {
    long[] u = new long[2];
    try (Stream<Path> all = Files.walk(root)) {
      all.forEach(
          p -> {
            try {
              BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
              if (a.isRegularFile()) {
                u[0] += a.size();
                u[1]++;
              }
            } catch (IOException e) {
              // changed while counting
            }
          });
    }
    return u;
  }

  /** Mount points at or under a directory, from this process's mount table. */
  static List<Path> mountPointsUnder(Path dir) throws IOException {
    String prefix = dir.toRealPath().toString();
    List<Path> found = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String mountPoint = unescape(line.split(" ")[4]);
      if (mountPoint.equals(prefix) || mountPoint.startsWith(prefix + "/")) {
        found.add(Path.of(mountPoint));
      }
    }
    return found;
  }

  private static String unescape(String field) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '\\' && i + 3 < field.length()) {
        b.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  /** Loop devices whose backing file is under a directory. */
  static List<String> loopDevicesBackedBy(Path dir) throws IOException {
    String prefix = dir.toRealPath().toString();
    List<String> found = new ArrayList<>();
    try (Stream<Path> devices = Files.list(Path.of("/sys/block"))) {
      for (Path d : devices.filter(d -> d.getFileName().toString().startsWith("loop")).toList()) {
        Path backing = d.resolve("loop/backing_file");
        if (Files.exists(backing) && Files.readString(backing).strip().startsWith(prefix)) {
          found.add(d.getFileName().toString());
        }
      }
    }
    return found;
  }

  /** Images of sandboxes (and spares made ahead), not the templates they are copied from. */
  static List<Path> imagesIn(Path dataDir) throws IOException {
    Path images = dataDir.resolve("sandbox/images");
    if (!Files.isDirectory(images)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(images)) {
      return files.filter(f -> !f.getFileName().toString().startsWith("template-")).toList();
    }
  }
}
