package dev.pysandbox.util;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * Native libraries shipped inside the jar, written once to a directory of the server's own and
 * loaded from there: a file named by its content, so that every process of every version finds its
 * own, written whole ({@link DurableFiles}) so that none ever loads half a file, and compared byte
 * for byte before it is trusted. The name is a CRC-32C and the length, not a cryptographic hash:
 * the comparison is what makes a file trusted, and SHA-256 of SQLite's 1.1 MB library was a fifth
 * of a CLI command's start-up (the JVM runs it interpreted there).
 */
public final class NativeLibraries {
  private NativeLibraries() {}

  /**
   * The library at {@code resource} (of {@code owner}'s class loader) as a file in {@code dir},
   * written there if it is not already; empty when the jar holds no such resource.
   *
   * @param stem the file's name before its content hash ({@code libsqlitejdbc})
   */
  public static Optional<Path> install(Class<?> owner, String resource, Path dir, String stem)
      throws IOException {
    byte[] bytes;
    try (InputStream in = owner.getResourceAsStream(resource)) {
      if (in == null) {
        return Optional.empty();
      }
      bytes = in.readAllBytes();
    }
    Files.createDirectories(dir);
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    Path lib =
        dir.resolve(
            String.format(Locale.ROOT, "%s-%08x-%d.so", stem, crc.getValue(), bytes.length));
    if (!Files.isRegularFile(lib, LinkOption.NOFOLLOW_LINKS)
        || Files.size(lib) != bytes.length
        || !Arrays.equals(Files.readAllBytes(lib), bytes)) {
      DurableFiles.writeReadable(lib, bytes);
    }
    return Optional.of(lib);
  }
}
