package dev.pysandbox.core.runs;

import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.config.Tier;
import dev.pysandbox.packages.Requirement;
import java.util.List;

/**
 * A run as the run path decided it before it begins: its id (chosen once, at the start, and held as
 * a value from there on: a run held for approval keeps it when it runs), what runs, under which
 * limits, and how its record opens. The one input of both places a run can happen (a fresh sandbox,
 * or its session's).
 *
 * @param sessionId its session, or null for a one-shot run
 * @param tier the tier of a one-shot run's sandbox, and of a session the run opens
 * @param requestedTier the tier the call named, or null: a session of another tier refuses it
 * @param oneShotLimits the limits of a one-shot run's sandbox, or null for its tier's
 * @param wanted the packages it asks for (its own and its code's PEP 723 ones), empty for none
 */
record RunPlan(
    String runId,
    String tenant,
    String sessionId,
    String code,
    int timeoutSeconds,
    Tier tier,
    String requestedTier,
    Limits oneShotLimits,
    List<Requirement> wanted,
    Opening opening) {

  /** How the run's record opens: a new record, or the one a held run was recorded with. */
  sealed interface Opening permits Fresh, Approved {}

  /**
   * A new run, recorded {@code running} as it begins.
   *
   * @param parentRunId the run this one re-runs, or null
   * @param findings what the code's analysis found, when it was analysed before running
   */
  record Fresh(ExecutionRequest request, String parentRunId, List<RiskFinding> findings)
      implements Opening {}

  /**
   * A run that waited for approval and was approved: its record ({@code awaiting_approval}) becomes
   * {@code running}.
   *
   * @param stored the run as recorded, with its code
   */
  record Approved(RunRecord stored) implements Opening {}
}
