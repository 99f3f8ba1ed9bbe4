package dev.pysandbox.store;

import dev.pysandbox.api.Approval;

/**
 * An approval and the server process that holds its run (executes it once approved).
 *
 * @param instanceId the holding server's instance id
 */
public record HeldApproval(Approval approval, String instanceId) {}
