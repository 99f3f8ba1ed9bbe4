package dev.pysandbox.mcp;

import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.FindingText;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunOutputs;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.api.op.Operations;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;

/**
 * The tools on runs and their history (run_python, get_run, rerun, diff_runs, purge_runs, the
 * approvals list, the security events, check_setup …): the text content each answers beside its
 * structured result. Their declarations and calls are {@link Operations}' and {@link
 * dev.pysandbox.api.op.OperationCalls}'; this is only MCP's presentation.
 */
final class RunTools {
  private RunTools() {}

  /**
   * @param resultOutputLimit the most characters of stdout and stderr a run's text content shows
   */
  static List<SyncToolSpecification> specs(ToolFactory f, int resultOutputLimit) {
    return List.of(
        f.tool(Operations.RUN_PYTHON, (RunRecord r) -> ToolResults.run(r, resultOutputLimit)),
        f.tool(
            Operations.VALIDATE_CODE,
            (ValidationReport r) -> ToolResults.ok(r, FindingText.summary(r))),
        f.tool(
            Operations.CANCEL_RUN,
            (CancelResult r) ->
                ToolResults.ok(r, r.runId() + ": " + r.status() + " — " + r.message())),
        f.tool(
            Operations.LIST_RUNS,
            (RunPage page) ->
                ToolResults.listing(
                    page,
                    page.runs().size() + " of " + page.total() + " runs",
                    page.runs(),
                    r ->
                        r.runId()
                            + "  "
                            + r.status()
                            + "  "
                            + r.createdAt()
                            + "  "
                            + r.codePreview())),
        f.tool(Operations.GET_RUN, (RunRecord r) -> ToolResults.run(r, 0)),
        f.tool(
            Operations.GET_RUN_OUTPUTS,
            (RunOutputs o) -> ToolResults.ok(o, Json.write(o.outputs()))),
        f.tool(Operations.RERUN, (RunRecord r) -> ToolResults.run(r, resultOutputLimit)),
        f.tool(
            Operations.DIFF_RUNS,
            (dev.pysandbox.api.RunDiff d) ->
                ToolResults.ok(
                    d,
                    d.summary()
                        + (d.codeDiff().isEmpty() ? "" : "\n\ncode:\n" + d.codeDiff())
                        + (d.stdoutDiff().isEmpty() ? "" : "\nstdout:\n" + d.stdoutDiff()))),
        f.tool(
            Operations.DELETE_RUN,
            (dev.pysandbox.api.DeleteResult r) ->
                ToolResults.ok(
                    r,
                    "deleted "
                        + r.runId()
                        + (r.filesDeleted()
                            ? " and its files (" + r.filesBytes() + " bytes)"
                            : "; its files stay on disk"))),
        f.tool(
            Operations.PURGE_RUNS,
            (dev.pysandbox.api.PurgeResult r) ->
                ToolResults.ok(
                    r,
                    (r.dryRun() ? "dry run: would delete " : "deleted ")
                        + r.runs()
                        + " runs, "
                        + r.bytesFreed()
                        + " bytes"
                        + (r.more() ? " (more match: call again)" : ""))),
        f.tool(
            Operations.EXPORT_SESSION,
            (dev.pysandbox.api.SessionExport e) ->
                ToolResults.ok(
                    e,
                    "session "
                        + e.sessionId()
                        + ": "
                        + e.runCount()
                        + " runs ("
                        + e.failedCount()
                        + " not succeeded) exported as "
                        + e.format()
                        + " to "
                        + e.fileName()
                        + " ("
                        + e.sizeBytes()
                        + " bytes)"
                        + (e.content() == null
                            ? "; too large to return, open it on the host"
                            : ""))),
        f.tool(
            Operations.LIST_PENDING_APPROVALS,
            (dev.pysandbox.api.ApprovalList list) ->
                ToolResults.listing(
                    list,
                    list.approvals().size() + " pending",
                    list.approvals(),
                    a ->
                        a.approvalId()
                            + "  run "
                            + a.runId()
                            + "  until "
                            + a.expiresAt()
                            + "  "
                            + a.why())),
        f.tool(
            Operations.LIST_SECURITY_EVENTS,
            (dev.pysandbox.api.SecurityEventList page) ->
                ToolResults.listing(
                    page,
                    page.events().size()
                        + " security events"
                        + (page.nextCursor() == null
                            ? ""
                            : " (older: cursor " + page.nextCursor() + ")"),
                    page.events(),
                    e ->
                        e.at()
                            + "  "
                            + e.kind()
                            + "  "
                            + (e.sessionId() == null ? "-" : e.sessionId())
                            + "  "
                            + (e.runId() == null ? "-" : e.runId())
                            + "  "
                            + Json.write(e.detail()))),
        f.tool(
            Operations.CHECK_SETUP,
            (SetupReport r) -> {
              String text =
                  (r.ready() ? "ready" : "NOT ready")
                      + "; backend "
                      + r.backends().get(0).name()
                      + ", python "
                      + r.interpreter().getOrDefault("version", "?")
                      + (r.problems().isEmpty()
                          ? ""
                          : "\nproblems:\n- " + String.join("\n- ", r.problems()));
              return ToolResults.ok(r, text);
            }));
  }
}
