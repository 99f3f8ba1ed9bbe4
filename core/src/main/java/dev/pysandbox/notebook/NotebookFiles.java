package dev.pysandbox.notebook;

import dev.pysandbox.api.RunRecord;
import dev.pysandbox.util.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * A run's notebooks on disk: {@value #IPYNB} and {@value #PY} in its run directory ({@code
 * runs/<id>/}). Each file is written whole or not at all ({@link DurableFiles}: synced, so that a
 * full disk is an error here rather than a notebook that reads back empty later), and replaces the
 * old one, so a reader sees the old file or the new one, never part of one. Thread-safe.
 */
public final class NotebookFiles {
  public static final String IPYNB = "notebook.ipynb", PY = "notebook.py";

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
    DurableFiles.removeAbandoned(runDir);
    replace(runDir.resolve(IPYNB), ipynb);
    replace(runDir.resolve(PY), py);
  }

  /** True when both notebook files are in {@code runDir} (as regular files, not links). */
  public static boolean present(Path runDir) {
    return Files.isRegularFile(runDir.resolve(IPYNB), LinkOption.NOFOLLOW_LINKS)
        && Files.isRegularFile(runDir.resolve(PY), LinkOption.NOFOLLOW_LINKS);
  }

  private static void replace(Path target, String text) throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    DurableFiles.writeReadable(target, bytes);
  }
}
