package dev.pysandbox.core.trajectories;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code trajectory_retention_days}: deletes the trajectory files whose last line was written
 * before a cut-off. Only regular {@code .jsonl} files two levels down ({@code TENANT/sessions/},
 * {@code TENANT/days/}) are looked at, and no link is followed or deleted.
 */
final class TrajectoryRetention {
  private static final Logger log = LoggerFactory.getLogger(TrajectoryRetention.class);
  private static final List<String> KINDS = List.of("sessions", "days");

  private TrajectoryRetention() {}

  /**
   * @return how many files were deleted
   */
  static int sweep(Path trajectories, Instant cutoff) {
    int deleted = 0;
    try {
      for (Path tenant : directories(trajectories)) {
        for (String kind : KINDS) {
          Path dir = tenant.resolve(kind);
          if (!isDirectory(dir)) {
            continue;
          }
          try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.jsonl")) {
            for (Path f : files) {
              if (old(f, cutoff)) {
                Files.deleteIfExists(f);
                deleted++;
              }
            }
          }
        }
      }
    } catch (NoSuchFileException e) {
      // nothing recorded yet
    } catch (IOException | RuntimeException e) {
      log.warn("trajectory: retention sweep of {} failed: {}", trajectories, e.toString());
    }
    if (deleted > 0) {
      log.info("trajectory: deleted {} files with no line since {}", deleted, cutoff);
    }
    return deleted;
  }

  private static List<Path> directories(Path dir) throws IOException {
    if (!isDirectory(dir)) {
      return List.of();
    }
    try (DirectoryStream<Path> all =
        Files.newDirectoryStream(dir, TrajectoryRetention::isDirectory)) {
      return java.util.stream.StreamSupport.stream(all.spliterator(), false).toList();
    }
  }

  private static boolean isDirectory(Path p) {
    return Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
  }

  private static boolean old(Path f, Instant cutoff) throws IOException {
    try {
      BasicFileAttributes a =
          Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return a.isRegularFile() && a.lastModifiedTime().toInstant().isBefore(cutoff);
    } catch (NoSuchFileException e) {
      return false;
    }
  }
}
