package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.AgentRunColumns.UNFINISHED;
import static dev.pysandbox.store.jdbc.ColumnValues.params;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunList;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.store.AgentRunStore;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The {@code agent_runs} and {@code agent_steps} tables (V15) for {@link JdbcRunStore}: an agent
 * run is inserted when it starts, its state written again as it goes ({@code update}: status,
 * model, session, answer, stop reason, error, approval, usage, end) and its steps added or replaced
 * by index. Once its status is final nothing changes it: every write says so in its WHERE clause,
 * so a late write (a model answer after a cancel) changes nothing even when it races the final one.
 * Listings are keyset pages, newest first, with a cursor of the last row's {@code
 * created_at|agent_run_id}, so agent runs started while a client pages do not shift the pages. Rows
 * are mapped by {@link AgentRunColumns}.
 */
final class AgentRunRows implements AgentRunStore {
  static final int MAX_LIMIT = 1000;

  private static final String PUT_STEP =
      "INSERT INTO agent_steps ("
          + AgentRunColumns.STEP_COLUMNS
          + ") SELECT ?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?"
          + " WHERE EXISTS (SELECT 1 FROM agent_runs WHERE agent_run_id=? AND"
          + UNFINISHED
          + ") ON CONFLICT (agent_run_id, idx) DO UPDATE SET kind=excluded.kind,"
          + " text=excluded.text, code=excluded.code, run_id=excluded.run_id,"
          + " run_status=excluded.run_status, output=excluded.output, tool=excluded.tool,"
          + " prompt=excluded.prompt, tokens_in=excluded.tokens_in, tokens_out=excluded.tokens_out,"
          + " tokens_estimated=excluded.tokens_estimated, duration_ms=excluded.duration_ms,"
          + " started_at=excluded.started_at, error=excluded.error";

  private static final String INSERT_STEP =
      "INSERT INTO agent_steps ("
          + AgentRunColumns.STEP_COLUMNS
          + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

  private static final String INTERRUPT =
      "UPDATE agent_runs SET status='"
          + AgentRunStatus.INTERRUPTED.wireName()
          + "', stop_reason=?, ended_at=? WHERE agent_run_id=? AND"
          + UNFINISHED;

  private final CachedConnection db;
  private final Clock clock;

  AgentRunRows(CachedConnection db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  @Override
  public void insert(AgentRunInfo run, String instanceId) {
    Objects.requireNonNull(run.tenant(), "tenant");
    Objects.requireNonNull(run.createdAt(), "createdAt");
    Objects.requireNonNull(instanceId, "instanceId");
    db.transaction(
        "record agent run " + run.agentRunId(),
        tx -> {
          tx.write(AgentRunColumns.INSERT_RUN, params(AgentRunColumns.insert(run, instanceId)));
          for (AgentStep step : run.steps()) {
            tx.write(INSERT_STEP, params(AgentRunColumns.step(run.agentRunId(), step)));
          }
          return null;
        });
  }

  @Override
  public boolean putStep(String agentRunId, AgentStep step) {
    Object[] values = AgentRunColumns.step(agentRunId, step);
    Object[] withRun = Arrays.copyOf(values, values.length + 1);
    withRun[values.length] = agentRunId;
    return db.write(PUT_STEP, params(withRun)) == 1;
  }

  @Override
  public boolean update(AgentRunInfo run) {
    return db.write(AgentRunColumns.UPDATE_STATE, params(AgentRunColumns.state(run))) == 1;
  }

  @Override
  public Optional<AgentRunInfo> get(String tenant, String agentRunId) {
    Optional<AgentRunInfo> run =
        db
            .read(
                "SELECT * FROM agent_runs WHERE agent_run_id=? AND tenant=?",
                params(agentRunId, Objects.requireNonNull(tenant, "tenant")),
                ColumnValues.rows(AgentRunColumns::run))
            .stream()
            .findFirst();
    return run.map(
        r ->
            r.withSteps(
                db.read(
                    "SELECT * FROM agent_steps WHERE agent_run_id=? ORDER BY idx",
                    params(agentRunId),
                    ColumnValues.rows(AgentRunColumns::step))));
  }

  /**
   * @throws PysandboxException {@code invalid_argument} when {@code limit} is not 1 to {@value
   *     #MAX_LIMIT} or the cursor is not one a page gave
   */
  @Override
  public AgentRunList list(String tenant, int limit, String cursor, AgentRunStatus status) {
    if (limit < 1 || limit > MAX_LIMIT) {
      throw PysandboxException.invalid(
          "limit " + limit + " is out of range: use 1 to " + MAX_LIMIT);
    }
    Filters where =
        new Filters()
            .and("tenant=?", Objects.requireNonNull(tenant, "tenant"))
            .and("status=?", status == null ? null : status.wireName());
    if (cursor != null) {
      Cursor after = Cursor.parse(cursor);
      where.and(
          "(created_at<? OR (created_at=? AND agent_run_id<?))",
          after.createdAt,
          after.createdAt,
          after.agentRunId);
    }
    List<AgentRunInfo> rows =
        db.read(
            "SELECT * FROM agent_runs"
                + where
                + " ORDER BY created_at DESC, agent_run_id DESC LIMIT ?",
            ps -> ps.setInt(where.bind(ps), limit + 1),
            ColumnValues.rows(AgentRunColumns::run));
    if (rows.size() <= limit) {
      return new AgentRunList(rows, null);
    }
    List<AgentRunInfo> page = rows.subList(0, limit);
    AgentRunInfo last = page.get(limit - 1);
    return new AgentRunList(
        page, Instant.parse(last.createdAt()).toEpochMilli() + "|" + last.agentRunId());
  }

  @Override
  public List<String> interruptAll(String instanceId, String reason) {
    List<String> open =
        db.read(
            "SELECT agent_run_id FROM agent_runs WHERE instance_id=? AND" + UNFINISHED,
            params(instanceId),
            ColumnValues::strings);
    return interrupt(open, reason);
  }

  @Override
  public List<String> interruptOrphans(Predicate<String> instanceAlive, String reason) {
    List<String[]> open =
        db.read(
            "SELECT agent_run_id, instance_id FROM agent_runs WHERE" + UNFINISHED,
            ps -> {},
            ColumnValues.rows(rs -> new String[] {rs.getString(1), rs.getString(2)}));
    List<String> dead = new ArrayList<>();
    for (String[] run : open) {
      if (!instanceAlive.test(run[1])) {
        dead.add(run[0]);
      }
    }
    return interrupt(dead, reason);
  }

  /** Interrupts each of {@code ids} still unfinished (one may have ended meanwhile): those. */
  private List<String> interrupt(List<String> ids, String reason) {
    List<String> changed = new ArrayList<>();
    for (String id : ids) {
      if (db.write(INTERRUPT, params(reason, clock.millis(), id)) == 1) {
        changed.add(id);
      }
    }
    return changed;
  }

  /** Where a page ended: the last row's creation (epoch ms) and id. */
  private record Cursor(long createdAt, String agentRunId) {
    static Cursor parse(String cursor) {
      int bar = cursor.indexOf('|');
      if (bar > 0 && bar < cursor.length() - 1) {
        try {
          return new Cursor(Long.parseLong(cursor.substring(0, bar)), cursor.substring(bar + 1));
        } catch (NumberFormatException e) {
          // told below
        }
      }
      throw PysandboxException.invalid(
          "cursor "
              + PysandboxException.quote(cursor)
              + " is not one a page of agent runs gave: pass the next_cursor of the page before,"
              + " or none for the first page");
    }
  }
}
