package dev.pysandbox.core.files;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.function.BiConsumer;

/**
 * Visits the regular files under a directory of the server's own (its data directory: the audit's
 * sizes, the blob migration's list), links neither followed nor reported. Written once because both
 * walks filter and follow the same way; what the code can change is walked by {@link TreeWalk}
 * instead, by descriptor.
 */
public final class RegularFiles {
  private RegularFiles() {}

  /**
   * @param skipUnreadable whether a file or directory that cannot be read is passed over; when not,
   *     the walk stops with its error
   * @param visit told each regular file with its attributes
   */
  public static void each(
      Path dir, boolean skipUnreadable, BiConsumer<Path, BasicFileAttributes> visit)
      throws IOException {
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            if (attrs.isRegularFile()) {
              visit.accept(file, attrs);
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (skipUnreadable) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }
        });
  }
}
