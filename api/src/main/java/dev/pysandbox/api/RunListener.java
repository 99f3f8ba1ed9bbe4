package dev.pysandbox.api;

/**
 * Told about a run while it happens, so that a face can act on it (cancel it when its client gives
 * up, show its output as it comes).
 */
@FunctionalInterface
public interface RunListener {
  RunListener NONE = runId -> {};

  /**
   * The run is recorded and about to start; {@code cancelRun(runId)} and {@code attach(runId, …)}
   * reach it from now on. Called on the thread that runs the call; must not block.
   */
  void started(String runId);

  /**
   * Whether the listener takes the run's {@link #event events}; a run whose listener does not costs
   * no delivery at all. Asked once, when the run starts.
   */
  default boolean wantsEvents() {
    return false;
  }

  /**
   * One event of the run, in order ({@code started} first, {@code done} last), when {@link
   * #wantsEvents()}. Called on a thread of the core's, one call at a time per run, never on the
   * thread that reads the sandbox; a listener that takes long falls behind (it gets {@link
   * RunEvent.Lagged}) but never slows the run. {@code done} may come after the call has returned.
   */
  default void event(RunEvent event) {}

  /**
   * Asks a person to decide a run held for approval, when this face can reach one (MCP elicitation,
   * when the client declares it); blocks until answered. The core calls it on the caller's thread,
   * after the run and its approval are recorded, so that a decision taken elsewhere meanwhile (the
   * command line) wins if it comes first.
   *
   * @param approval the approval, with the code and the findings to show
   * @return the decision, or {@code null} when no person can be asked here (the run stays pending)
   */
  default ApprovalDecision askApproval(Approval approval) {
    return null;
  }

  /**
   * One line of what the server does before the run starts (building the package environment it
   * asked for: pip's output, which may take minutes), for a face to show as progress. Called on the
   * caller's thread or the build's, before {@link #started}; must not block.
   */
  default void preparing(String line) {}

  /**
   * The caller's own model, when its face can ask it (an MCP client that declared sampling), for
   * agent runs whose server uses agent_provider sampling; null otherwise.
   */
  default dev.pysandbox.api.agent.ModelClient clientModel() {
    return null;
  }

  /**
   * {@code llm_query(prompt)} called by the run's code (agent runs, issue 26): the model's answer,
   * asked by the server on the code's behalf (the sandbox has no network). Called on a server
   * thread while the code waits; it may take as long as a model call.
   *
   * @throws PysandboxException whose message the code's {@code RuntimeError} carries: a budget
   *     spent, a provider failure, or (this default) a run that is not an agent's
   */
  default String subcall(String prompt) {
    throw PysandboxException.invalid(
        "llm_query is available only in the code of an agent run (agent_run)");
  }
}
