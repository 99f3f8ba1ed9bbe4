package dev.pysandbox.api;

/**
 * A workspace file a run created, changed or deleted, as measured by the server.
 *
 * @param path path relative to {@code /mnt/data}
 * @param sizeBytes size after the run (0 when deleted)
 * @param sha256 hex digest of the content after the run, of the copy kept with the run when one was
 *     kept ({@code null} when deleted or not kept)
 * @param mediaType guessed from the file name
 * @param change {@code created}, {@code modified} or {@code deleted}
 * @param skipped why the file was not kept with the run (a symbolic link, a FIFO, over the disk
 *     quota, nested too deep …); {@code null} when it was kept or deleted. Absent in records
 *     written before this field existed, which reads as {@code null}.
 */
public record Artifact(
    String path,
    long sizeBytes,
    String sha256,
    String mediaType,
    ArtifactChange change,
    String skipped) {

  /** A file kept with the run (or deleted by it). */
  public Artifact(
      String path, long sizeBytes, String sha256, String mediaType, ArtifactChange change) {
    this(path, sizeBytes, sha256, mediaType, change, null);
  }
}
