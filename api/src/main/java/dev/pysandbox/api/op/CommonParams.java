package dev.pysandbox.api.op;

/** The arguments several operations declare alike, written once for {@link Operations}. */
final class CommonParams {
  private CommonParams() {}

  static Param packages(String description) {
    return Param.strings("packages", description);
  }

  static Param approvalId() {
    return Param.id("approval_id", "The approval's id (apr_ + 16 hex).").required();
  }

  static Param runId(String description) {
    return Param.id("run_id", description).required();
  }

  static Param sessionId() {
    return Param.id("session_id", "The session's id.").required();
  }
}
