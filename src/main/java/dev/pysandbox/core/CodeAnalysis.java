package dev.pysandbox.core;

import dev.pysandbox.api.ValidationReport;

/**
 * The risk analysis of code before it runs: Python's own {@code ast}, by the interpreter that will
 * run the code, in a sandbox of its own (never in the server's process).
 */
final class CodeAnalysis implements AutoCloseable {
  /**
   * Analyses {@code code} without running it.
   *
   * @throws dev.pysandbox.api.PysandboxException {@code backend_unavailable} when no analysis
   *     sandbox can be started
   */
  ValidationReport analyze(String code) {
    throw new UnsupportedOperationException("the analysis is not built yet");
  }

  @Override
  public void close() {}
}
