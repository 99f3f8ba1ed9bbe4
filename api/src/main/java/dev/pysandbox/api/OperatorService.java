package dev.pysandbox.api;

import java.util.List;
import java.util.function.Consumer;

/**
 * The service as the host's operator has it (the command line): every tenant's view ({@link
 * Tenants}), and what only the operator may do across tenants or outside any face. The faces have
 * {@link SandboxService}; the command line has this, so that it depends on the api, not on the core
 * that implements it.
 */
public interface OperatorService extends SandboxService, Tenants {
  /** Every tenant's pending approvals. */
  ApprovalList allPendingApprovals();

  /** Every tenant's runs, each with its tenant. */
  RunPage allRuns(RunQuery query);

  /**
   * The open sessions of every tenant, each with its tenant, as the servers sharing the data
   * directory last recorded them.
   */
  List<SessionInfo> allRecordedSessions();

  /** Every tenant's security events, each with its tenant. */
  SecurityEventList allSecurityEvents(SecurityEventQuery query);

  /** Any tenant's approval, with its code. */
  Approval anyApproval(String approvalId);

  /**
   * Decides any tenant's approval as the host's operator ({@code cli:<user>}); the server holding
   * the run starts it within a second.
   */
  RunRecord decideAsOperator(String approvalId, boolean approve, String reason);

  /**
   * Builds (or finds) the environment for these packages now, telling {@code progress} each line
   * the build prints.
   *
   * @throws PysandboxException {@code invalid_argument} for a bad spec, {@code environment_failed}
   *     naming what pip said
   */
  EnvironmentInfo buildEnvironment(List<String> packages, Consumer<String> progress);

  /** Recomputes the store's hash chain from the records and files as they are now. */
  VerifyReport verifyRecords();
}
