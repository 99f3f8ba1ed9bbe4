package dev.pysandbox.core.environments;

import dev.pysandbox.core.files.Descriptor;
import dev.pysandbox.core.files.Stat;
import dev.pysandbox.core.files.TreeWalk;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * File work on package environments' directories, which a build sandbox wrote: measured by
 * allocated blocks, made the server's own and read-only to everyone else after a build, removed
 * without following a link. Static: the cache, the builder and the wheelhouse copy all need it.
 */
final class EnvironmentFiles {
  private static final Logger log = LoggerFactory.getLogger(EnvironmentFiles.class);

  private EnvironmentFiles() {}

  /**
   * After a build, with its sandbox gone: the server's own user owns every file and nobody but it
   * may write one (a sandbox built it as a uid that a later sandbox gets again). Never follows a
   * link.
   */
  static void fixOwnership(Path dir) throws IOException {
    boolean root = dev.pysandbox.backend.HostUser.currentUid() == 0;
    try (var walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        if (root) {
          Files.setAttribute(p, "unix:uid", 0, LinkOption.NOFOLLOW_LINKS);
          Files.setAttribute(p, "unix:gid", 0, LinkOption.NOFOLLOW_LINKS);
        }
        if (Files.isSymbolicLink(p)) {
          continue;
        }
        Set<PosixFilePermission> perms =
            Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
        boolean exec = perms.contains(PosixFilePermission.OWNER_EXECUTE);
        boolean isDir = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(
            p, PosixFilePermissions.fromString(isDir || exec ? "rwxr-xr-x" : "rw-r--r--"));
      }
    }
  }

  /** Bytes the directory takes (allocated blocks), without following links. */
  static long sizeOf(Path dir) {
    long[] total = new long[1];
    try (Descriptor d = Descriptor.openDirectory(dir)) {
      TreeWalk.walk(
          d,
          new TreeWalk.Visitor() {
            @Override
            public boolean entry(Descriptor parent, byte[] name, String path, Stat st, int depth) {
              total[0] += st.allocated();
              return st.isDirectory();
            }

            @Override
            public boolean wantsPaths() {
              return false;
            }
          });
    } catch (IOException e) {
      log.debug("cannot measure {}", dir, e);
    }
    return total[0];
  }

  static void setMode(Path p, String mode) throws IOException {
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
  }

  static void deleteTree(Path dir) {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (var walk = Files.walk(dir)) {
      List<Path> all = walk.toList();
      for (int i = all.size() - 1; i >= 0; i--) {
        Path p = all.get(i);
        if (!Files.isSymbolicLink(p) && Files.isDirectory(p)) {
          p.toFile().setWritable(true, true);
        }
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      log.warn("cannot remove {}: {}", dir, e.toString());
    }
  }
}
