package dev.pysandbox.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cgroup file system as both versions use it: reading and writing the control files, where this
 * process's groups are, and emptying a group of its processes (they leave only once reaped).
 */
final class CgroupFiles {
  private static final Logger log = LoggerFactory.getLogger(CgroupFiles.class);

  private CgroupFiles() {}

  /** Per controller (v1) or "" (v2): the group this process is in, from {@code /proc/self}. */
  static Map<String, String> ownPaths() throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
      String[] f = line.split(":", 3);
      if (f.length == 3) {
        for (String c : f[1].split(",")) {
          out.put(c, f[2]);
        }
      }
    }
    return out;
  }

  static Path under(Path mount, String path) {
    String rel = path.startsWith("/") ? path.substring(1) : path;
    return rel.isEmpty() ? mount : mount.resolve(rel);
  }

  /**
   * Kills every process in {@code dirs} until they are empty or the deadline passes.
   *
   * @return processes still in them at the end
   */
  static int killMembers(List<Path> dirs, long deadlineNanos) {
    while (true) {
      List<Long> pids = new ArrayList<>();
      for (Path dir : dirs) {
        try {
          for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
            if (!line.isBlank()) {
              pids.add(Long.parseLong(line.trim()));
            }
          }
        } catch (IOException | NumberFormatException e) {
          // removed, or not ours
        }
      }
      pids.forEach(ProcessTable::killNow);
      if (pids.isEmpty() || System.nanoTime() > deadlineNanos) {
        return pids.size();
      }
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return pids.size();
      }
    }
  }

  /** Kills every member of each group below {@code dir}, removes them, then {@code dir}. */
  static void emptyAndRemove(Path dir, long deadlineNanos) {
    try (var children = Files.list(dir)) {
      for (Path child : children.filter(Files::isDirectory).toList()) {
        killMembers(List.of(child), deadlineNanos);
        removeQuietly(child);
      }
    } catch (IOException e) {
      log.debug("cannot list cgroup {}: {}", dir, e.getMessage());
    }
    removeQuietly(dir);
  }

  static void write(Path dir, String file, String value) throws IOException {
    Files.write(dir.resolve(file), value.getBytes(StandardCharsets.US_ASCII));
  }

  static void writeIfPresent(Path dir, String file, String value) {
    if (Files.exists(dir.resolve(file))) {
      writeQuietly(dir, file, value);
    }
  }

  static void writeQuietly(Path dir, String file, String value) {
    try {
      write(dir, file, value);
    } catch (IOException e) {
      log.debug("cannot write {} to {}/{}: {}", value, dir, file, e.getMessage());
    }
  }

  static long readLong(Path dir, String file, long fallback) {
    try {
      return Long.parseLong(Files.readString(dir.resolve(file)).trim());
    } catch (IOException | NumberFormatException e) {
      return fallback;
    }
  }

  /** The value of {@code key} in a "key value" file, or 0. */
  static long keyed(Path dir, String file, String key) {
    try {
      for (String line : Files.readAllLines(dir.resolve(file))) {
        String[] f = line.trim().split("\\s+");
        if (f.length == 2 && f[0].equals(key)) {
          return Long.parseLong(f[1]);
        }
      }
    } catch (IOException | NumberFormatException e) {
      // absent on this kernel
    }
    return 0;
  }

  static void removeQuietly(Path dir) {
    try {
      Files.deleteIfExists(dir);
    } catch (NoSuchFileException e) {
      // gone
    } catch (IOException e) {
      log.debug("cannot remove cgroup {}: {}", dir, e.getMessage());
    }
  }
}
