package dev.pysandbox.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Host user ids: who the server runs as, and who a named user is.
 *
 * @param name the user name
 * @param uid numeric user id
 * @param gid primary group id
 */
public record HostUser(String name, int uid, int gid) {

  /** The real uid of this process. */
  public static int currentUid() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("Uid:")) {
          return Integer.parseInt(line.substring(4).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | NumberFormatException e) {
      throw new IllegalStateException("cannot read this process's uid from /proc/self/status", e);
    }
    throw new IllegalStateException("no Uid line in /proc/self/status");
  }

  /** Looks a user up through NSS ({@code getent passwd}). */
  public static Optional<HostUser> lookup(String name) {
    if (!name.matches("[a-z_][a-z0-9_-]{0,31}\\$?")) {
      return Optional.empty();
    }
    try {
      Process p = new ProcessBuilder("getent", "passwd", name).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0 || out.isEmpty()) {
        return Optional.empty();
      }
      String[] f = out.split(":");
      return Optional.of(new HostUser(f[0], Integer.parseInt(f[2]), Integer.parseInt(f[3])));
    } catch (IOException | NumberFormatException | ArrayIndexOutOfBoundsException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }
}
