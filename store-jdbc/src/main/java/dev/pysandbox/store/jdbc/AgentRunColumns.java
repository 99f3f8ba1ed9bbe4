package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.getInt;
import static dev.pysandbox.store.jdbc.ColumnValues.getLong;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.WireEnum;
import dev.pysandbox.api.agent.AgentBudgetUse;
import dev.pysandbox.api.agent.AgentBudgets;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentStepKind;
import dev.pysandbox.api.agent.AgentUsage;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The columns of {@code agent_runs} and {@code agent_steps} (V15): the values an {@link
 * AgentRunInfo} and an {@link AgentStep} are written as, and the one row mapper of each, so that
 * {@link AgentRunRows} writes and reads them the same way. Usage and budgets are columns of their
 * own; what is left of each budget is not stored but computed from them on read.
 */
final class AgentRunColumns {
  /** The condition of an agent run that may still change (its status not final). */
  static final String UNFINISHED =
      " status IN ("
          + Arrays.stream(AgentRunStatus.values())
              .filter(s -> !s.finished())
              .map(s -> "'" + s.wireName() + "'")
              .collect(Collectors.joining(","))
          + ")";

  static final String INSERT_RUN =
      "INSERT INTO agent_runs (agent_run_id, tenant, instance_id, status, task, provider, model,"
          + " session_id, own_session, answer, stop_reason, error_code, retryable, approval_id,"
          + " prompt_tokens, completion_tokens, total_tokens, tokens_estimated, iterations,"
          + " subcalls, seconds, max_iterations, token_budget, time_budget_seconds, max_subcalls,"
          + " max_depth, created_at, ended_at)"
          + " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

  /** The state {@code update} writes; bound by {@link #state}, then the id. */
  static final String UPDATE_STATE =
      "UPDATE agent_runs SET status=?, model=?, session_id=?, own_session=?, answer=?,"
          + " stop_reason=?, error_code=?, retryable=?, approval_id=?, prompt_tokens=?,"
          + " completion_tokens=?, total_tokens=?, tokens_estimated=?, iterations=?, subcalls=?,"
          + " seconds=?, ended_at=? WHERE agent_run_id=? AND"
          + UNFINISHED;

  static final String STEP_COLUMNS =
      "agent_run_id, idx, kind, text, code, run_id, run_status, output, tool, prompt, tokens_in,"
          + " tokens_out, tokens_estimated, duration_ms, started_at, error";

  private AgentRunColumns() {}

  /** {@link #INSERT_RUN}'s values. */
  static Object[] insert(AgentRunInfo run, String instanceId) {
    AgentUsage u = run.usage();
    AgentBudgets b = run.budgets();
    return new Object[] {
      run.agentRunId(),
      run.tenant(),
      instanceId,
      run.status().wireName(),
      run.task(),
      run.provider(),
      run.model(),
      run.sessionId(),
      flag(run.ownSession()),
      run.answer(),
      run.stopReason(),
      run.errorCode(),
      run.retryable() == null ? null : flag(run.retryable()),
      run.approvalId(),
      u.promptTokens(),
      u.completionTokens(),
      u.totalTokens(),
      flag(u.tokensEstimated()),
      u.iterations(),
      u.subcalls(),
      u.seconds(),
      b == null ? null : b.maxIterations(),
      b == null ? null : b.tokenBudget(),
      b == null ? null : b.timeBudgetSeconds(),
      b == null ? null : b.maxSubcalls(),
      b == null ? null : b.maxDepth(),
      millis(run.createdAt()),
      millis(run.endedAt())
    };
  }

  /** {@link #UPDATE_STATE}'s values. */
  static Object[] state(AgentRunInfo run) {
    AgentUsage u = run.usage();
    return new Object[] {
      run.status().wireName(),
      run.model(),
      run.sessionId(),
      flag(run.ownSession()),
      run.answer(),
      run.stopReason(),
      run.errorCode(),
      run.retryable() == null ? null : flag(run.retryable()),
      run.approvalId(),
      u.promptTokens(),
      u.completionTokens(),
      u.totalTokens(),
      flag(u.tokensEstimated()),
      u.iterations(),
      u.subcalls(),
      u.seconds(),
      millis(run.endedAt()),
      run.agentRunId()
    };
  }

  /** The values of {@link #STEP_COLUMNS}, in order. */
  static Object[] step(String agentRunId, AgentStep s) {
    return new Object[] {
      agentRunId,
      s.index(),
      s.kind().wireName(),
      s.text(),
      s.code(),
      s.runId(),
      s.runStatus(),
      s.output(),
      s.tool(),
      s.prompt(),
      s.tokensIn(),
      s.tokensOut(),
      s.tokensEstimated() == null ? null : flag(s.tokensEstimated()),
      s.durationMs(),
      millis(s.startedAt()),
      s.error()
    };
  }

  /** An {@code agent_runs} row, without steps. */
  static AgentRunInfo run(ResultSet rs) throws SQLException {
    AgentUsage usage =
        new AgentUsage(
            rs.getLong("prompt_tokens"),
            rs.getLong("completion_tokens"),
            rs.getLong("total_tokens"),
            rs.getInt("tokens_estimated") != 0,
            rs.getInt("iterations"),
            rs.getInt("subcalls"),
            rs.getDouble("seconds"));
    AgentBudgets budgets = budgets(rs);
    List<AgentBudgetUse> use = budgets == null ? List.of() : budgets.use(usage, 0);
    Integer retryable = getInt(rs, "retryable");
    return new AgentRunInfo(
        rs.getString("agent_run_id"),
        rs.getString("tenant"),
        WireEnum.parse(AgentRunStatus.class, rs.getString("status")),
        rs.getString("task"),
        rs.getString("provider"),
        rs.getString("model"),
        rs.getString("session_id"),
        rs.getInt("own_session") != 0,
        rs.getString("answer"),
        rs.getString("stop_reason"),
        rs.getString("error_code"),
        retryable == null ? null : retryable != 0,
        rs.getString("approval_id"),
        List.of(),
        usage,
        budgets,
        use,
        instant(getLong(rs, "created_at")),
        instant(getLong(rs, "ended_at")));
  }

  /** An {@code agent_steps} row. */
  static AgentStep step(ResultSet rs) throws SQLException {
    Integer estimated = getInt(rs, "tokens_estimated");
    return new AgentStep(
        rs.getInt("idx"),
        WireEnum.parse(AgentStepKind.class, rs.getString("kind")),
        rs.getString("text"),
        rs.getString("code"),
        rs.getString("run_id"),
        rs.getString("run_status"),
        rs.getString("output"),
        rs.getString("tool"),
        rs.getString("prompt"),
        getInt(rs, "tokens_in"),
        getInt(rs, "tokens_out"),
        estimated == null ? null : estimated != 0,
        rs.getLong("duration_ms"),
        instant(getLong(rs, "started_at")),
        rs.getString("error"));
  }

  /**
   * The budgets a row was started with; null when none were stored, or when they are no longer
   * valid (a maximum lowered since): reading an old agent run must not fail for that.
   */
  private static AgentBudgets budgets(ResultSet rs) throws SQLException {
    Integer maxIterations = getInt(rs, "max_iterations");
    if (maxIterations == null) {
      return null;
    }
    try {
      return new AgentBudgets(
          maxIterations,
          rs.getLong("token_budget"),
          rs.getInt("time_budget_seconds"),
          rs.getInt("max_subcalls"),
          rs.getInt("max_depth"));
    } catch (PysandboxException e) {
      return null;
    }
  }

  private static int flag(boolean b) {
    return b ? 1 : 0;
  }

  private static Long millis(String instant) {
    return instant == null ? null : Instant.parse(instant).toEpochMilli();
  }

  private static String instant(Long millis) {
    return millis == null ? null : Instant.ofEpochMilli(millis).toString();
  }
}
