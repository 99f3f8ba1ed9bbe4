package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * What one request to the runner produced.
 *
 * @param frame the runner's {@code done} frame
 * @param stdout standard output produced while the request ran
 * @param stderr standard error produced while the request ran
 * @param displays MIME bundles the code displayed while it ran, in order
 * @param displaysDropped how many displays were dropped because the display budget was spent
 * @param elapsedNanos from the request's write to its {@code done} frame
 */
public record WorkerReply(
    ObjectNode frame,
    CapturedText stdout,
    CapturedText stderr,
    List<ObjectNode> displays,
    int displaysDropped,
    long elapsedNanos) {}
