package dev.pysandbox.api;

import java.util.List;

/**
 * What {@code purge_runs} did, or would do on a dry run.
 *
 * @param dryRun true: nothing was changed; the counts say what a real purge would remove
 * @param olderThanDays runs created more than this many days ago were chosen
 * @param status only runs in this state were chosen, or null for every finished run
 * @param runs how many runs were (or would be) deleted
 * @param filesBytes bytes of run files (kept files, notebooks) freed
 * @param recordBytes characters of record text freed
 * @param bytesFreed {@code filesBytes + recordBytes}
 * @param runIds the first {@value #MAX_IDS_LISTED} of those runs, oldest first
 * @param more true when more runs matched than one purge takes ({@value #MAX_RUNS_PER_CALL}); call
 *     again
 */
public record PurgeResult(
    boolean dryRun,
    int olderThanDays,
    String status,
    long runs,
    long filesBytes,
    long recordBytes,
    long bytesFreed,
    List<String> runIds,
    boolean more) {
  public static final int MAX_IDS_LISTED = 100;
  public static final int MAX_RUNS_PER_CALL = 10_000;
  public static final int MAX_DAYS = 36_500;
}
