package dev.pysandbox.core.blobs;

import dev.pysandbox.api.RunRecord;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.files.Descriptor;
import dev.pysandbox.core.files.FileContents;
import dev.pysandbox.core.files.RegularFiles;
import dev.pysandbox.core.files.Stat;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.DurableFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Start-up of the blob store ({@link KeptBlobs}): moves the files runs kept the old way ({@code
 * runs/<id>/files/...}) into it, then removes what a crash left (temporary copies of dead writers,
 * references of deleted runs, blobs nothing references, blob files without a row). Each old file is
 * hashed through a descriptor (a link or a file with another hard link is left where it is, never
 * read), referenced, then renamed into place (the same file system: no copy, no extra room), so a
 * crash at any point leaves it either still in the old place (the next start moves it) or in the
 * store with its row: nothing is lost, and a second run of it finds nothing left to do.
 */
public final class BlobMigration {
  private static final Logger log = LoggerFactory.getLogger(BlobMigration.class);

  private final DataLayout layout;
  private final RunStore store;
  private final KeptBlobs blobs;

  public BlobMigration(DataLayout layout, RunStore store) {
    this.layout = layout;
    this.store = store;
    this.blobs = new KeptBlobs(layout, () -> store);
  }

  /** Moves the old layout's files, then sweeps. Failures are logged; the server starts anyway. */
  public void run() {
    try {
      int moved = moveOldRuns();
      if (moved > 0) {
        log.info("moved {} kept files into the blob store {}", moved, blobs.dir());
      }
      sweep();
    } catch (IOException | RuntimeException e) {
      log.warn(
          "the blob store's start-up did not finish (the next start resumes): {}", e.toString());
    }
  }

  /** The runs whose files are still under {@code runs/<id>/files}; how many files were moved. */
  int moveOldRuns() throws IOException {
    Path runs = layout.runsDir();
    if (!Files.isDirectory(runs, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    int moved = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(runs)) {
      for (Path runDir : entries) {
        Path files = runDir.resolve("files");
        if (!Files.isDirectory(runDir, LinkOption.NOFOLLOW_LINKS)
            || !Files.isDirectory(files, LinkOption.NOFOLLOW_LINKS)) {
          continue;
        }
        String runId = runDir.getFileName().toString();
        // Only a run that is recorded: the files of a run deleted with delete_files=false stay.
        Optional<RunRecord> run = store.get(runId, false);
        if (run.isPresent() && run.get().finishedAt() != null) {
          moved += moveRun(run.get(), files);
        }
      }
    }
    return moved;
  }

  private int moveRun(RunRecord run, Path files) throws IOException {
    int moved = 0;
    for (String path : regularFiles(files)) {
      try {
        if (moveOne(run, files, path)) {
          moved++;
        }
      } catch (IOException e) {
        log.warn(
            "could not move {} of run {} into the blob store: {}", path, run.runId(), e.toString());
      }
    }
    removeEmptyDirectories(files);
    return moved;
  }

  /** Moves one old file: hashed by descriptor, referenced, then renamed into place. */
  private boolean moveOne(RunRecord run, Path files, String path) throws IOException {
    String[] parts = path.split("/");
    List<Descriptor> opened = new ArrayList<>();
    try (Descriptor root = blobs.openRoot(true)) {
      Descriptor dir = Descriptor.openDirectory(files);
      opened.add(dir);
      for (int i = 0; i < parts.length - 1; i++) {
        dir = dir.openDirectory(RunFiles.bytes(parts[i]));
        opened.add(dir);
      }
      byte[] name = RunFiles.bytes(parts[parts.length - 1]);
      Stat st;
      String sha256;
      try (Descriptor file = dir.openFile(name)) {
        st = file.stat();
        if (!KeptBlobs.sound(st, st.size())) {
          log.warn(
              "left {} of run {} where it is: not a plain file with one link", path, run.runId());
          return false;
        }
        sha256 = FileContents.sha256(file, st.size());
      }
      String tenant = run.tenant() == null ? "" : run.tenant();
      store.blobs().reference(tenant, run.runId(), path, sha256, st.size());
      KeptBlobs.place(root, dir, name, sha256, st.size());
      return true;
    } finally {
      for (int i = opened.size() - 1; i >= 0; i--) {
        opened.get(i).close();
      }
    }
  }

  /** The regular files under {@code dir}, relative, links not followed (nor listed). */
  private static List<String> regularFiles(Path dir) throws IOException {
    List<String> out = new ArrayList<>();
    RegularFiles.each(dir, false, (file, attrs) -> out.add(dir.relativize(file).toString()));
    return out;
  }

  /** Removes the directories left empty, deepest first; what is left (a link) stays, logged. */
  private static void removeEmptyDirectories(Path files) throws IOException {
    Files.walkFileTree(
        files,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException e) {
            try {
              Files.delete(d);
            } catch (IOException notEmpty) {
              log.warn("{} is not empty after its files moved into the blob store", d);
            }
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /** Removes what a crash left: dead writers' copies, references of deleted runs, orphans. */
  void sweep() throws IOException {
    Path tmp = blobs.dir().resolve("tmp");
    if (Files.isDirectory(tmp, LinkOption.NOFOLLOW_LINKS)) {
      DurableFiles.removeAbandoned(tmp);
    }
    int freed = store.blobs().sweep(blobs::deleteFile);
    int orphans = 0;
    if (Files.isDirectory(blobs.dir(), LinkOption.NOFOLLOW_LINKS)) {
      try (DirectoryStream<Path> shards =
          Files.newDirectoryStream(blobs.dir(), "[0-9a-f][0-9a-f]")) {
        for (Path shard : shards) {
          if (!Files.isDirectory(shard, LinkOption.NOFOLLOW_LINKS)) {
            continue;
          }
          try (DirectoryStream<Path> names = Files.newDirectoryStream(shard)) {
            for (Path blob : names) {
              String sha = blob.getFileName().toString();
              if (sha.matches("[0-9a-f]{64}")
                  && sha.startsWith(shard.getFileName().toString())
                  && store.blobs().deleteIfUnknown(sha, blobs::deleteFile)) {
                orphans++;
              }
            }
          }
        }
      }
    }
    if (freed + orphans > 0) {
      log.info("freed {} blobs no run references", freed + orphans);
    }
  }
}
