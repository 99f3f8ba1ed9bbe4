package dev.pysandbox.core.runs;

import dev.pysandbox.api.Approval;
import dev.pysandbox.api.ApprovalDecision;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.core.approvals.Approvals;
import dev.pysandbox.store.HeldApproval;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a person approved, through the one run path ({@link Runs#runApproved}): the server that
 * holds a run starts it on one of the core's threads as soon as it is approved (from the command
 * line or REST), and every second looks for approved runs still waiting, its own and those of a
 * dead server, which it adopts. A run approved at its caller's own prompt runs on the caller's
 * thread instead ({@link Runs}).
 */
public final class ApprovedRuns {
  private static final Logger log = LoggerFactory.getLogger(ApprovedRuns.class);

  private final Approvals approvals;
  private final Runs runs;
  private final String instanceId;
  private final Executor blocking;
  private final Set<String> executing = ConcurrentHashMap.newKeySet();

  public ApprovedRuns(Approvals approvals, Runs runs, String instanceId, Executor blocking) {
    this.approvals = approvals;
    this.runs = runs;
    this.instanceId = instanceId;
    this.blocking = blocking;
  }

  /**
   * Decides a pending approval (see {@link Approvals#decide}); an approved run this server holds is
   * started in the background, one another server holds is started by it on its next look (within a
   * second).
   *
   * @return the run as it stands after the decision
   */
  public RunRecord decide(String tenant, String approvalId, ApprovalDecision decision, String via) {
    HeldApproval held = approvals.decide(tenant, approvalId, decision, via);
    Approval a = held.approval();
    if (decision.approved() && held.instanceId().equals(instanceId)) {
      executeSoon(a.tenant(), a.runId());
    }
    return approvals.stored(a.runId());
  }

  /** Expires what is due and starts the approved runs this server holds. Never throws. */
  public void tick() {
    try {
      for (Approval a : approvals.toStart()) {
        executeSoon(a.tenant(), a.runId());
      }
    } catch (RuntimeException e) {
      log.warn("looking at approvals failed (again in a second): {}", e.getMessage());
    }
  }

  private void executeSoon(String tenant, String runId) {
    if (!executing.add(runId)) {
      return;
    }
    try {
      blocking.execute(
          () -> {
            try {
              runs.runApproved(tenant, approvals.withCode(runId), RunListener.NONE);
            } catch (RuntimeException e) {
              // A busy session, a stopping server: still approved and waiting; tried again.
              log.info("approved run {} did not start yet: {}", runId, e.getMessage());
            } finally {
              executing.remove(runId);
            }
          });
    } catch (RejectedExecutionException e) {
      executing.remove(runId);
    }
  }
}
