package dev.pysandbox.core;

import dev.pysandbox.api.RunRecord;
import java.nio.file.Path;

/** Where tests find a run's kept file on disk: the blob store, by its content's sha256. */
final class KeptBlobPaths {
  private KeptBlobPaths() {}

  static Path of(Path dataDir, RunRecord r, String path) {
    String sha =
        r.artifacts().stream()
            .filter(a -> a.path().equals(path))
            .findFirst()
            .orElseThrow()
            .sha256();
    return dataDir.resolve("blobs").resolve(sha.substring(0, 2)).resolve(sha);
  }
}
