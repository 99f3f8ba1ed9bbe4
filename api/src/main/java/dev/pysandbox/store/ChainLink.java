package dev.pysandbox.store;

import java.util.Map;

/**
 * One link of the store's hash chain as {@link RunStore#chain()} finds it.
 *
 * @param seq its place in the chain, from 1
 * @param runId the run it seals
 * @param tenant the run's tenant
 * @param recordSha256 the link as sealed
 * @param deleted true for the tombstone of a run deleted through the service
 * @param problem null when the link holds; else {@code link_broken} (its previous link is not the
 *     one before it: a link was removed or changed), {@code record_changed} (the record no longer
 *     hashes to the link) or {@code record_missing} (the run is gone without a tombstone)
 * @param keptFiles path to sha256 of the files the run's record says it kept (empty for a tombstone
 *     or a missing record)
 * @param filesDir the host directory of those files, or null
 */
public record ChainLink(
    long seq,
    String runId,
    String tenant,
    String recordSha256,
    boolean deleted,
    String problem,
    Map<String, String> keptFiles,
    String filesDir) {}
