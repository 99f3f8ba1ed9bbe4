package dev.pysandbox.api;

import java.util.List;

/**
 * What {@code pysandbox runs verify} found: the store's hash chain recomputed from the records and
 * the files as they are now.
 *
 * @param ok true when every link holds and every kept file is as sealed
 * @param links links checked (runs and tombstones)
 * @param tombstones of which were runs deleted through the service
 * @param files kept files hashed
 * @param head the chain's last link: write it down elsewhere to make a rewrite of the whole chain
 *     detectable later
 * @param firstBreak the first link that does not hold, or null
 * @param problems every run whose record or files changed, and every broken link, in chain order
 */
public record VerifyReport(
    boolean ok,
    long links,
    long tombstones,
    long files,
    String head,
    Problem firstBreak,
    List<Problem> problems) {

  /**
   * One thing that does not hold.
   *
   * @param seq the link's place in the chain
   * @param runId the run, or null (a truncated chain)
   * @param kind {@code record_changed}, {@code record_missing}, {@code link_broken}, {@code
   *     chain_truncated}, {@code file_changed} or {@code file_missing}
   * @param detail what exactly (the file's path, the hashes)
   */
  public record Problem(long seq, String runId, String kind, String detail) {}
}
