package dev.pysandbox.api;

/**
 * The core, as every face sees it. Thread-safe; every method validates its arguments and fails with
 * a {@link PysandboxException} carrying one of the closed set of {@link ErrorCode}s.
 */
public interface SandboxService extends AutoCloseable {
  /**
   * Runs code and returns the finished run. A run that fails, times out or is killed still returns
   * normally, with its status; exceptions are for calls that could not run at all.
   */
  RunRecord run(ExecutionRequest request);

  /** A page of run history, newest first. */
  RunPage listRuns(RunQuery query);

  /**
   * @throws PysandboxException {@code not_found} when no run has this id
   */
  RunRecord getRun(String runId, boolean includeCode);

  /** What is installed, what is missing, the limits in force. */
  SetupReport checkSetup();

  @Override
  void close();
}
