package dev.pysandbox.config;

import dev.pysandbox.api.Ids;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads {@code fs_mounts}: host directories a tier may show read-only at {@code /mnt/host/<name>}.
 * Each is resolved once, here, to its real path, and that path is what sandboxes get: a link the
 * path went through is not followed again later. A directory that would show the data directory
 * (every workspace, the run history), the launcher's staged copy of it, or the kernel's own file
 * systems is refused.
 */
final class HostMounts {
  /** Host trees no sandbox may see, in part or as a part of a larger directory. */
  private static final List<Path> NEVER =
      List.of(Path.of("/proc"), Path.of("/sys"), Path.of("/dev"), DataLayout.STAGE_BASE);

  private HostMounts() {}

  /**
   * @param raw {@code name=/abs/dir,name2=/other} (empty for none)
   * @param dataDir the server's data directory
   * @return name to real path, in the order given
   * @throws IllegalArgumentException saying which entry is wrong and why
   */
  static Map<String, Path> parse(String raw, Path dataDir) {
    Map<String, Path> out = new LinkedHashMap<>();
    for (String part : raw.split(",")) {
      if (part.isBlank()) {
        continue;
      }
      int eq = part.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("'" + part.trim() + "' is not name=/absolute/directory");
      }
      String name = part.substring(0, eq).trim();
      String dir = part.substring(eq + 1).trim();
      if (!Ids.PATTERN.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "mount name '" + name + "' is invalid: use 1-64 letters, digits, '_' and '-'");
      }
      if (out.containsKey(name)) {
        throw new IllegalArgumentException("mount name '" + name + "' is given twice");
      }
      out.put(name, resolve(name, dir, dataDir));
    }
    return out;
  }

  private static Path resolve(String name, String dir, Path dataDir) {
    Path given = Path.of(dir);
    if (!given.isAbsolute()) {
      throw new IllegalArgumentException(name + "=" + dir + ": the path must be absolute");
    }
    if (!Files.isDirectory(given)) {
      throw new IllegalArgumentException(
          name
              + "="
              + dir
              + (Files.exists(given, LinkOption.NOFOLLOW_LINKS)
                  ? ": not a directory"
                  : ": no such directory"));
    }
    Path real;
    try {
      real = given.toRealPath();
    } catch (IOException e) {
      throw new IllegalArgumentException(name + "=" + dir + ": cannot resolve it: " + e);
    }
    String shown = name + "=" + dir + (real.equals(given) ? "" : " (real path " + real + ")");
    if (real.getParent() == null) {
      throw new IllegalArgumentException(shown + ": the root directory would show the whole host");
    }
    Path data = realOrNormal(dataDir);
    if (real.startsWith(data) || data.startsWith(real)) {
      throw new IllegalArgumentException(
          shown
              + (real.startsWith(data) ? ": lies inside" : ": contains")
              + " the data directory "
              + data
              + " (workspaces, run history)");
    }
    for (Path never : NEVER) {
      if (real.startsWith(never) || never.startsWith(real)) {
        throw new IllegalArgumentException(
            shown + (real.startsWith(never) ? ": lies inside " : ": contains ") + never);
      }
    }
    return real;
  }

  /** The real path of {@code p}, or of its nearest existing ancestor with the rest appended. */
  private static Path realOrNormal(Path p) {
    Path normal = p.toAbsolutePath().normalize();
    for (Path existing = normal; existing != null; existing = existing.getParent()) {
      try {
        return existing.toRealPath().resolve(existing.relativize(normal));
      } catch (IOException e) {
        // not there (yet): try its parent
      }
    }
    return normal;
  }
}
