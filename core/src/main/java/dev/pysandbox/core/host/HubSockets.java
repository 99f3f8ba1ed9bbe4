package dev.pysandbox.core.host;

import dev.pysandbox.backend.HostUser;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where each server's worker hub listens, named so that the server that made a socket can be told
 * from its name, and so that a starting server can remove the sockets of dead ones: a server killed
 * with SIGKILL never deletes its own, and they would pile up. Under the data directory the name is
 * {@code run/io-<instance>.sock}; when that path is too long for a Unix socket (108 bytes), {@code
 * <tmp>/pysandbox-<uid>/io-<data directory identity>-<instance>.sock}, a directory every data
 * directory of this user shares, so the identity says whose it is.
 */
public final class HubSockets {
  /** The longest socket path used (the kernel's limit is 107 bytes and a NUL). */
  private static final int MAX_PATH_BYTES = 100;

  private static final Pattern OWN = Pattern.compile("io-([0-9a-f]{8})\\.sock");

  private HubSockets() {}

  /** The hub's socket of server {@code instance}. */
  public static Path of(DataLayout layout, String instance) {
    Path preferred = layout.runtimeDir().resolve("io-" + instance + ".sock");
    if (preferred.toString().getBytes(StandardCharsets.UTF_8).length <= MAX_PATH_BYTES) {
      return preferred;
    }
    return fallbackDir().resolve("io-" + layout.identity() + "-" + instance + ".sock");
  }

  private static Path fallbackDir() {
    return Path.of(System.getProperty("java.io.tmpdir"), "pysandbox-" + HostUser.currentUid());
  }

  /**
   * Deletes the sockets of this data directory's servers that are dead (their instance lock is
   * free). A live server's socket is never touched: its lock is taken before its socket is made and
   * dropped only after the socket is deleted.
   *
   * @return how many were deleted
   */
  static int removeDead(DataLayout layout, Predicate<String> instanceAlive) {
    Pattern shared =
        Pattern.compile("io-" + Pattern.quote(layout.identity()) + "-([0-9a-f]{8})\\.sock");
    return removeDead(layout.runtimeDir(), OWN, instanceAlive)
        + removeDead(fallbackDir(), shared, instanceAlive);
  }

  private static int removeDead(Path dir, Pattern names, Predicate<String> instanceAlive) {
    int removed = 0;
    if (!ownDirectory(dir)) {
      return 0;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        Matcher m = names.matcher(p.getFileName().toString());
        if (m.matches() && isSocket(p) && !instanceAlive.test(m.group(1))) {
          if (Files.deleteIfExists(p)) {
            removed++;
          }
        }
      }
    } catch (IOException e) {
      // unreadable: nothing removed; the next start tries again
    }
    return removed;
  }

  /** A real directory of this user (in a shared /tmp, anyone could have made one of that name). */
  private static boolean ownDirectory(Path dir) {
    try {
      return Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
          && ((Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS))
              == HostUser.currentUid();
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
  }

  private static boolean isSocket(Path p) {
    try {
      BasicFileAttributes a =
          Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return a.isOther();
    } catch (IOException e) {
      return false;
    }
  }
}
