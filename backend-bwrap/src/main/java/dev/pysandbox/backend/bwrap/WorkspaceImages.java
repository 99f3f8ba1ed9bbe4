package dev.pysandbox.backend.bwrap;

import dev.pysandbox.backend.SandboxIds;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.util.Futures;
import dev.pysandbox.util.HousekeepingLog;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Workspaces that are file systems of their own: an ext4 image per sandbox, the size of its disk
 * quota and with a bounded number of inodes, so that the quota holds whenever the code writes, not
 * only while the server watches a run. The launcher makes, mounts and releases them (see
 * launcher.py); this class decides whether the host allows them, names their files, and finds what
 * servers that died left behind.
 */
final class WorkspaceImages {
  /** One inode per 16 KiB of quota (ext4's own default ratio), never fewer than this. */
  static final long BYTES_PER_INODE = 16 * 1024;

  static final long MIN_INODES = 1024;

  /** How long releasing an image may take the launcher (unmounting, deleting). */
  static final long RELEASE_WAIT_SECONDS = 10;

  /** Making the first template runs mkfs, which takes longer for a big quota. */
  private static final long PROBE_WAIT_SECONDS = 120;

  private static final Logger log = LoggerFactory.getLogger(WorkspaceImages.class);

  /** Changes whenever the mkfs options do, so that an old template is never used. */
  private static final String TEMPLATE_VERSION = "v1";

  private static final List<Path> SBIN =
      List.of(Path.of("/usr/sbin"), Path.of("/sbin"), Path.of("/usr/bin"), Path.of("/bin"));

  /**
   * One workspace's image and its two mount points.
   *
   * @param file the image, under {@code <data_dir>/sandbox/images}
   * @param template the fresh file system it is copied from
   * @param host where the server sees the workspace (its mount point in the server's namespace)
   * @param stage where bwrap finds it (in the launcher's namespace), or {@code null}
   */
  record Image(
      Path file,
      Path template,
      long bytes,
      long inodes,
      Path mkfs,
      Path debugfs,
      Path host,
      Path stage) {}

  private final DataLayout layout;
  private final Path mkfs;
  private final Path debugfs;
  private volatile String unavailable;

  private WorkspaceImages(DataLayout layout, Path mkfs, Path debugfs, String unavailable) {
    this.layout = layout;
    this.mkfs = mkfs;
    this.debugfs = debugfs;
    this.unavailable = unavailable;
  }

  /**
   * What this host allows.
   *
   * @param wanted {@code disk_quota_fs=auto}
   */
  static WorkspaceImages detect(boolean wanted, boolean serverIsRoot, DataLayout layout) {
    Path mkfs = find("mkfs.ext4");
    Path debugfs = find("debugfs");
    String why = null;
    if (!wanted) {
      why = "turned off (disk_quota_fs=off)";
    } else if (!serverIsRoot) {
      why = "the server is not root (loop devices and mounts need root)";
    } else if (!Files.exists(Path.of("/dev/loop-control"))) {
      why = "no loop devices (/dev/loop-control is missing: modprobe loop)";
    } else if (mkfs == null || debugfs == null) {
      why = "mkfs.ext4 or debugfs not found (Debian: apt-get install e2fsprogs)";
    }
    return new WorkspaceImages(layout, mkfs, debugfs, why);
  }

  private static Path find(String program) {
    for (Path dir : SBIN) {
      Path p = dir.resolve(program);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  boolean available() {
    return unavailable == null;
  }

  Optional<String> unavailableReason() {
    return Optional.ofNullable(unavailable);
  }

  /** After a probe failed: workspaces are plain directories from now on. */
  void disable(String why) {
    unavailable = why;
  }

  /** How the disk quota is held, for check_setup. */
  String describe() {
    return available()
        ? "file system: an ext4 image per workspace, loop-mounted (bytes, and one inode per "
            + BYTES_PER_INODE / 1024
            + " KiB of quota), at all times"
        : "measured while a run is in flight, not between runs (no file system per workspace: "
            + unavailable
            + ")";
  }

  static long inodes(long quotaBytes) {
    return Math.max(MIN_INODES, quotaBytes / BYTES_PER_INODE);
  }

  /**
   * @param host the workspace's mount point as the server sees it
   * @param stage the same as bwrap reaches it, or {@code null}
   */
  Image image(String sandboxId, long quotaBytes, Path host, Path stage) {
    long bytes = Math.max(quotaBytes, 1024 * 1024);
    long inodes = inodes(quotaBytes);
    Path template =
        layout
            .imagesDir()
            .resolve("template-" + TEMPLATE_VERSION + "-" + bytes + "-" + inodes + ".img");
    return new Image(
        layout.imagesDir().resolve(sandboxId + ".img"),
        template,
        bytes,
        inodes,
        mkfs,
        debugfs,
        host,
        stage);
  }

  /** The image a workspace had, when all that is known is its sandbox id (after a crash). */
  Image leftover(String sandboxId, Path host) {
    return new Image(
        layout.imagesDir().resolve(sandboxId + ".img"), null, 0, 0, null, null, host, null);
  }

  /**
   * Makes, mounts, writes to and releases one image of the default quota (which also makes its
   * template, so that the first sandbox does not wait for mkfs). If that fails, workspaces are
   * plain directories and the quota is measured, as without root.
   *
   * @param stageRoot the sandbox directory as the launcher's children see it
   */
  void probe(LauncherClient launcher, long quotaBytes, Path stageRoot, String instanceId) {
    String id = "probe-" + instanceId + "-1";
    Path host = layout.imagesDir().resolve(id + ".mnt");
    try {
      Files.createDirectories(host);
      launcher
          .probe(image(id, quotaBytes, host, stageRoot.resolve("images").resolve(id + ".mnt")))
          .get(PROBE_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      Throwable cause = Futures.unwrap(e);
      String why = cause.getMessage() != null ? cause.getMessage() : cause.toString();
      disable("making one failed: " + why);
      log.warn(
          "no file system per workspace ({}); the disk quota is only measured while a run is in"
              + " flight",
          why);
    } finally {
      deleteQuietly(host);
    }
  }

  /**
   * Unmounts the workspaces of dead servers of this data directory (their launcher's own mounts
   * died with it; those in the server's namespace stay until unmounted) and deletes their images,
   * so that their workspaces are plain directories again.
   */
  void releaseDead(Supplier<LauncherClient> launcher, Predicate<String> instanceAlive) {
    List<Path> mounts = deadMounts(instanceAlive);
    for (Path mount : mounts) {
      String id = mount.getFileName().toString().replaceFirst("\\.mnt$", "");
      try {
        launcher.get().release(id, leftover(id, mount)).get(RELEASE_WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        log.error("could not unmount {}, left by a stopped server: {}", mount, e.toString());
      }
    }
    int deleted = deleteDeadImages(instanceAlive);
    if (!mounts.isEmpty() || deleted > 0) {
      HousekeepingLog.LOG.warn(
          "released {} workspace file systems and deleted {} images left by stopped servers",
          mounts.size(),
          deleted);
    }
  }

  /**
   * Workspaces of dead servers still mounted in this mount namespace, found in {@code
   * /proc/self/mountinfo} under this data directory's workspaces only.
   */
  List<Path> deadMounts(Predicate<String> instanceAlive) {
    List<Path> found = new ArrayList<>();
    Path root;
    try {
      root = layout.sandboxRoot().toRealPath();
    } catch (IOException e) {
      return found;
    }
    String workspaces = root.resolve("workspaces") + "/";
    String images = root.resolve("images") + "/";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
        String[] f = line.split(" ");
        if (f.length < 5) {
          continue;
        }
        String point = unescape(f[4]);
        String under =
            point.startsWith(workspaces)
                ? point.substring(workspaces.length())
                : point.startsWith(images) ? point.substring(images.length()) : null;
        if (under == null || under.contains("/")) {
          continue;
        }
        String instance = SandboxIds.instanceOf(under.replaceFirst("^(probe|spare)-", "sbx-"));
        if (instance != null && !instanceAlive.test(instance)) {
          found.add(Path.of(point));
        }
      }
    } catch (IOException e) {
      // no mount table: nothing found
    }
    return found;
  }

  /**
   * Deletes images of dead servers and templates half made by dead launchers.
   *
   * @return how many files were deleted
   */
  private int deleteDeadImages(Predicate<String> instanceAlive) {
    int deleted = 0;
    if (!Files.isDirectory(layout.imagesDir())) {
      return 0;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(layout.imagesDir())) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        boolean dead;
        if (name.startsWith("template-") && name.contains(".tmp-")) {
          String pid = name.substring(name.lastIndexOf(".tmp-") + 5);
          dead =
              !pid.matches("[0-9]{1,10}")
                  || ProcessHandle.of(Long.parseLong(pid)).map(p -> !p.isAlive()).orElse(true);
        } else {
          String instance = SandboxIds.instanceOf(name.replaceFirst("^(probe|spare)-", "sbx-"));
          dead = instance != null && !instanceAlive.test(instance);
        }
        if (dead && deleteQuietly(f)) {
          deleted++;
        }
      }
    } catch (IOException e) {
      // unreadable: nothing deleted
    }
    return deleted;
  }

  private static boolean deleteQuietly(Path f) {
    try {
      return Files.deleteIfExists(f);
    } catch (IOException e) {
      return false;
    }
  }

  /** mountinfo escapes space, tab, newline and backslash as three octal digits. */
  static String unescape(String field) {
    StringBuilder b = new StringBuilder(field.length());
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '\\'
          && i + 3 < field.length()
          && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
        b.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
