package dev.pysandbox.notebook;

import dev.pysandbox.api.RunRecord;
import dev.pysandbox.util.RandomIds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A run's notebooks on disk: {@value #IPYNB} and {@value #PY} in its run directory ({@code
 * runs/<id>/}). Each file is written to a new temporary file in the same directory and renamed over
 * the old one, so a reader sees the old file or the new one, never part of one; no fsync (a
 * notebook can be made again from the record). Thread-safe.
 */
public final class NotebookFiles {
  public static final String IPYNB = "notebook.ipynb", PY = "notebook.py";

  /**
   * {@code .notebook.py.<pid>.<random>.tmp}: the writer's process id tells a crash's leftover (a
   * dead process's, or this process's when no write of its own has it open) from a temporary file
   * another live writer is still filling.
   */
  private static final Pattern TEMP =
      Pattern.compile("\\.(?:notebook\\.ipynb|notebook\\.py)\\.(\\d{1,10})\\.[0-9a-f]+\\.tmp");

  private static final long PID = ProcessHandle.current().pid();

  /** Names of the temporary files this process is writing now (each name is new). */
  private static final Set<String> WRITING = ConcurrentHashMap.newKeySet();

  private NotebookFiles() {}

  /**
   * Writes both notebooks of {@code run} into {@code runDir}, creating it if missing, replacing
   * earlier ones, after removing temporary files a crashed write left there. Both are made before
   * either is written, so a record that cannot be rendered leaves the directory as it was.
   *
   * @throws IOException when the directory or a file cannot be written; a file already replaced
   *     stays replaced, and no temporary file of this call is left behind
   * @throws NullPointerException when {@code run} or its code is {@code null}
   */
  public static void write(Path runDir, RunRecord run) throws IOException {
    String ipynb = Notebooks.ipynb(run);
    String py = Notebooks.marimo(run);
    Files.createDirectories(runDir);
    removeLeftovers(runDir);
    replace(runDir.resolve(IPYNB), ipynb);
    replace(runDir.resolve(PY), py);
  }

  /** True when both notebook files are in {@code runDir} (as regular files, not links). */
  public static boolean present(Path runDir) {
    return Files.isRegularFile(runDir.resolve(IPYNB), LinkOption.NOFOLLOW_LINKS)
        && Files.isRegularFile(runDir.resolve(PY), LinkOption.NOFOLLOW_LINKS);
  }

  private static void replace(Path target, String text) throws IOException {
    Path temp =
        target.resolveSibling(
            "." + target.getFileName() + "." + PID + "." + RandomIds.hex(8) + ".tmp");
    String name = temp.getFileName().toString();
    WRITING.add(name);
    try {
      Files.write(
          temp,
          text.getBytes(StandardCharsets.UTF_8),
          StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE);
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException | RuntimeException e) {
      try {
        Files.deleteIfExists(temp);
      } catch (IOException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    } finally {
      WRITING.remove(name);
    }
  }

  private static void removeLeftovers(Path dir) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, ".notebook.*.tmp")) {
      for (Path entry : entries) {
        Matcher m = TEMP.matcher(entry.getFileName().toString());
        if (m.matches() && abandoned(m.group(), Long.parseLong(m.group(1)))) {
          Files.deleteIfExists(entry);
        }
      }
    }
  }

  private static boolean abandoned(String name, long pid) {
    if (pid == PID) {
      return !WRITING.contains(name);
    }
    return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
  }
}
