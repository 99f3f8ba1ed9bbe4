package dev.pysandbox.notebook;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SessionStep;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

@Fast
class SessionTimelineTest {
  private static RunRecord run(String id, String at) {
    return RunFixtures.succeeded(id, "print(1)\n", "1\n").createdAt(at).build();
  }

  private static SessionStep step(String name, String at, String after) {
    return new SessionStep(SessionStep.CLEAR_CONTEXT, at, after, Map.of("name", name));
  }

  @Test
  void steps_standAfterTheRunTheyFollowed_inRecordedOrder_orByTimeWhenThatRunIsNotThere() {
    List<RunRecord> runs =
        List.of(run("r1", "2026-01-01T00:00:01Z"), run("r2", "2026-01-01T00:00:03Z"));
    List<SessionStep> steps =
        List.of(
            step("before any run", "2026-01-01T00:00:00Z", null),
            step("after r1", "2026-01-01T00:00:03Z", "r1"),
            step("after r1 too", "2026-01-01T00:00:03Z", "r1"),
            step("after a deleted run", "2026-01-01T00:00:04Z", "r0"),
            step("after r2", "2026-01-01T00:00:02Z", "r2"));
    assertThat(SessionTimeline.of(runs, steps))
        .extracting(e -> e.run() != null ? e.run().runId() : (String) e.step().detail().get("name"))
        .containsExactly(
            "before any run",
            "r1",
            "after r1",
            "after r1 too",
            "r2",
            "after a deleted run",
            "after r2");
  }
}
