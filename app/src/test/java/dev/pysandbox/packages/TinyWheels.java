package dev.pysandbox.packages;

import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Builds real, pip-installable pure-Python wheels from generated code, with {@code java.util.zip}
 * only (no Python needed): one package module, {@code METADATA}, {@code WHEEL} and a {@code RECORD}
 * with correct hashes. For tests that install packages offline, from a {@link SimpleIndex} or a
 * {@code --find-links} directory.
 *
 * <p>File and {@code .dist-info} names use the name escaped as the wheel spec says ({@code
 * Tiny-Pkg} gives {@code tiny_pkg-1.0-py3-none-any.whl}); {@code METADATA}'s {@code Name} keeps the
 * spelling given. The module is the normalised name with {@code -} as {@code _} ({@code tiny_pkg}).
 * Entries carry a fixed date, so the same inputs give the same bytes.
 */
public final class TinyWheels {
  private static final LocalDateTime ZIP_TIME = LocalDateTime.of(2020, 1, 1, 0, 0);

  private TinyWheels() {}

  /** A wheel whose module has the default source; see {@link #defaultSource}. */
  public static Path build(Path dir, String name, String version) throws IOException {
    return build(dir, name, version, null, List.of());
  }

  /** A wheel whose module has {@code moduleSource} ({@code null} for the default). */
  public static Path build(Path dir, String name, String version, String moduleSource)
      throws IOException {
    return build(dir, name, version, moduleSource, List.of());
  }

  /**
   * Writes {@code <escaped name>-<version>-py3-none-any.whl} into {@code dir} (created if missing).
   *
   * @param name a PEP 508 project name
   * @param version a PEP 440 version, as the file name and {@code METADATA} will carry it
   * @param moduleSource the module's {@code __init__.py}; {@code null} for {@link #defaultSource}
   * @param requiresDist {@code Requires-Dist} values, such as {@code tinydep>=1.0}, so a dependency
   *     chain can be resolved
   * @return the wheel written
   */
  public static Path build(
      Path dir, String name, String version, String moduleSource, List<String> requiresDist)
      throws IOException {
    if (!RequirementParser.NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("not a project name: " + name);
    }
    if (Pep440Version.parse(version).isEmpty()) {
      throw new IllegalArgumentException("not a PEP 440 version: " + version);
    }
    String escaped = name.replaceAll("[-_.]+", "_").toLowerCase(Locale.ROOT);
    String distInfo = escaped + "-" + version + ".dist-info";
    StringBuilder metadata =
        new StringBuilder("Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
    for (String r : requiresDist) {
      metadata.append("Requires-Dist: ").append(r).append('\n');
    }
    Map<String, byte[]> files = new LinkedHashMap<>();
    files.put(
        module(name) + "/__init__.py",
        utf8(moduleSource == null ? defaultSource(name, version) : moduleSource));
    files.put(distInfo + "/METADATA", utf8(metadata.toString()));
    files.put(
        distInfo + "/WHEEL",
        utf8(
            "Wheel-Version: 1.0\nGenerator: pysandbox-tinywheels (1.0)\n"
                + "Root-Is-Purelib: true\nTag: py3-none-any\n"));
    StringBuilder record = new StringBuilder();
    files.forEach(
        (path, bytes) ->
            record
                .append(path)
                .append(",sha256=")
                .append(recordHash(bytes))
                .append(',')
                .append(bytes.length)
                .append('\n'));
    record.append(distInfo).append("/RECORD,,\n");
    files.put(distInfo + "/RECORD", utf8(record.toString()));

    Files.createDirectories(dir);
    Path wheel = dir.resolve(escaped + "-" + version + "-py3-none-any.whl");
    try (OutputStream out = Files.newOutputStream(wheel);
        ZipOutputStream zip = new ZipOutputStream(out)) {
      for (Map.Entry<String, byte[]> f : files.entrySet()) {
        ZipEntry entry = new ZipEntry(f.getKey());
        entry.setTimeLocal(ZIP_TIME);
        zip.putNextEntry(entry);
        zip.write(f.getValue());
        zip.closeEntry();
      }
    }
    return wheel;
  }

  /** The import name of {@code name}'s module: normalised, {@code -} as {@code _}. */
  public static String module(String name) {
    return RequirementParser.normalize(name).replace('-', '_');
  }

  /** {@code __version__} and {@code hello()}, which returns {@link #greeting}. */
  public static String defaultSource(String name, String version) {
    return "__version__ = \""
        + version
        + "\"\n\n\ndef hello():\n    return \""
        + greeting(name, version)
        + "\"\n";
  }

  /** What the default module's {@code hello()} returns: {@code hello from <name> <version>}. */
  public static String greeting(String name, String version) {
    return "hello from " + name + " " + version;
  }

  /** A RECORD hash: SHA-256, URL-safe base64 without padding. */
  static String recordHash(byte[] bytes) {
    byte[] digest = Sha256.newDigest().digest(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
