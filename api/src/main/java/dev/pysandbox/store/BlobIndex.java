package dev.pysandbox.store;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Which content-addressed blob each run's kept file is (issue 24 item 9): the rows only; the files
 * are the core's ({@code KeptBlobs}). A blob's row is written before its file is put in place, and
 * its file is deleted only by the callback run inside the transaction that deletes the row, so two
 * processes sharing a data directory never delete a blob another has just referenced.
 */
public interface BlobIndex {
  /**
   * One kept file of a run.
   *
   * @param path relative to {@code /mnt/data}
   * @param sha256 the blob (its content's digest)
   * @param sizeBytes its size
   */
  record BlobRef(String path, String sha256, long sizeBytes) {}

  /**
   * Records that {@code runId} (of {@code tenant}) keeps {@code path} as the blob {@code sha256}.
   */
  void reference(String tenant, String runId, String path, String sha256, long sizeBytes);

  /** Whether any run of {@code tenant} references the blob (it then costs the tenant nothing). */
  boolean tenantHolds(String tenant, String sha256);

  /** The files {@code runId} keeps, by path. */
  List<BlobRef> files(String runId);

  /** The file {@code runId} keeps at {@code path}, if any. */
  Optional<BlobRef> file(String runId, String path);

  /** Bytes of the distinct blobs {@code tenant}'s runs reference: its storage. */
  long keptBytes(String tenant);

  /**
   * Bytes {@code tenant}'s storage would shrink by if {@code runIds} were gone: the distinct blobs
   * they reference that no other run of the same tenant does (other tenants are never looked at).
   */
  long freedBy(String tenant, Collection<String> runIds);

  /**
   * Drops the references of {@code runId} and frees the blobs no run references any more: each row
   * is deleted and {@code deleteFile} called for it inside one transaction (a blob whose file could
   * not be deleted keeps its row).
   *
   * @return what the tenant's storage shrank by ({@link #freedBy})
   */
  long release(String tenant, String runId, Predicate<String> deleteFile);

  /**
   * Start-up and purge hygiene: drops the references of runs that no longer exist (a crash between
   * a run's deletion and its release) and frees the blobs nothing references.
   *
   * @return how many blobs were freed
   */
  int sweep(Predicate<String> deleteFile);

  /**
   * Deletes, through {@code deleteFile}, a blob's file that has no row (one a crash left between
   * its file and its row), inside a transaction holding the write lock, so a row being written
   * meanwhile is seen.
   *
   * @return whether there was no row (and {@code deleteFile} was called)
   */
  boolean deleteIfUnknown(String sha256, Predicate<String> deleteFile);
}
