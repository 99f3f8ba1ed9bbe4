package dev.pysandbox.core.environments;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.core.files.Descriptor;
import dev.pysandbox.core.files.FileContents;
import dev.pysandbox.core.files.Stat;
import dev.pysandbox.util.RandomIds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The wheelhouse ({@code find_links}) as a build sandbox can read it. A server running as root runs
 * its sandboxes as other users, who cannot read a wheelhouse in a 0700 directory (a temporary
 * directory, a home directory): pip then failed with "Permission denied". So the server, which can
 * read it, hands it over: a wheelhouse every user can read is bound as it is; any other is copied,
 * regular files only (each opened by descriptor, never through a link, without blocking), into a
 * directory of the build's own under {@code envs/} that the sandbox's user can read, at most {@code
 * env_max_mb} of it, and the copy goes when the build ends.
 */
final class Wheelhouse implements AutoCloseable {
  private final Path dir;
  private final boolean copy;

  private Wheelhouse(Path dir, boolean copy) {
    this.dir = dir;
    this.copy = copy;
  }

  /** What the build binds at {@code /mnt/host/wheels}. */
  Path dir() {
    return dir;
  }

  /** Deletes the copy, if one was made. */
  @Override
  public void close() {
    if (copy) {
      EnvironmentFiles.deleteTree(dir);
    }
  }

  /**
   * @param findLinks the configured wheelhouse (a real path)
   * @param envs where the copy goes (a directory the sandboxes' users may read below)
   * @param key the environment being built, naming the copy
   * @param maxBytes most bytes of data copied ({@code env_max_mb})
   * @throws PysandboxException {@code environment_failed} (not retryable) naming the wheelhouse and
   *     what to do, when it cannot be read or holds more than {@code maxBytes}
   */
  static Wheelhouse forBuild(Path findLinks, Path envs, String key, long maxBytes) {
    if (HostUser.currentUid() != 0 || readableByEveryone(findLinks)) {
      return new Wheelhouse(findLinks, false);
    }
    Path copy = envs.resolve(".wheels-" + key + "-" + RandomIds.hex(6));
    Wheelhouse handed = new Wheelhouse(copy, true);
    try {
      Files.createDirectory(copy);
      Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
      copyFiles(findLinks, copy, maxBytes);
      return handed;
    } catch (IOException | RuntimeException e) {
      handed.close();
      throw e instanceof PysandboxException p
          ? p
          : refused(findLinks, "the server could not copy it for the build: " + e.getMessage());
    }
  }

  private static void copyFiles(Path from, Path to, long maxBytes) throws IOException {
    long left = maxBytes;
    try (Descriptor src = Descriptor.openDirectory(from);
        Descriptor dst = Descriptor.openDirectory(to);
        DirectoryStream<Path> names = Files.newDirectoryStream(from)) {
      for (Path p : names) {
        byte[] name = p.getFileName().toString().getBytes(StandardCharsets.UTF_8);
        Descriptor file;
        try {
          file = src.openFile(name);
        } catch (Descriptor.ErrnoException e) {
          continue; // a link, or gone: pip would not find it either
        }
        try (file) {
          Stat st = file.stat();
          if (!st.isRegular()) {
            continue;
          }
          if (st.allocated() > left) {
            throw tooBig(from, maxBytes);
          }
          FileContents.Copied c;
          try (Descriptor out = dst.createFile(name, 0644)) {
            c = FileContents.copy(file, st.size(), out, left);
          }
          if (c.overBudget()) {
            throw tooBig(from, maxBytes);
          }
          left -= c.dataBytes();
        }
      }
    }
  }

  /**
   * Whether any user may list the directory and read its files: others have {@code x} on every
   * directory above it, {@code r-x} on it and {@code r} on each regular file in it.
   */
  static boolean readableByEveryone(Path dir) {
    try {
      for (Path p = dir.getParent(); p != null; p = p.getParent()) {
        if (!Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE)) {
          return false;
        }
      }
      Set<PosixFilePermission> own = Files.getPosixFilePermissions(dir);
      if (!own.contains(PosixFilePermission.OTHERS_READ)
          || !own.contains(PosixFilePermission.OTHERS_EXECUTE)) {
        return false;
      }
      try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
        for (Path f : files) {
          if (Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)
              && !Files.getPosixFilePermissions(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                  .contains(PosixFilePermission.OTHERS_READ)) {
            return false;
          }
        }
      }
      return true;
    } catch (IOException | UnsupportedOperationException e) {
      return false; // unknown: copy it
    }
  }

  private static PysandboxException tooBig(Path findLinks, long maxBytes) {
    return refused(
        findLinks,
        "the sandboxes' users cannot read it, so each build gets a copy, and it holds more than"
            + " env_max_mb ("
            + maxBytes / Limits.MIB
            + " MiB): let them read it (chmod o+rx on it, o+x on the directories above it, o+r on"
            + " its files) or raise env_max_mb");
  }

  private static PysandboxException refused(Path findLinks, String why) {
    return new PysandboxException(
        ErrorCode.ENVIRONMENT_FAILED,
        "the wheelhouse (find_links = " + findLinks + ") cannot be used: " + why,
        false);
  }
}
