package dev.pysandbox.notebook;

import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SessionStep;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A session's runs and steps in the order they happened: each step right after the run it followed
 * ({@link SessionStep#afterRunId()}), in the order the steps were recorded; a step that followed no
 * run still recorded (none yet, or one deleted since) goes by its time.
 */
final class SessionTimeline {
  /** One cell pair of the notebook: a run, or a step. */
  record Entry(RunRecord run, SessionStep step) {}

  private SessionTimeline() {}

  static List<Entry> of(List<RunRecord> runs, List<SessionStep> steps) {
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < runs.size(); i++) {
      index.putIfAbsent(runs.get(i).runId(), i);
    }
    List<List<SessionStep>> slots = new ArrayList<>();
    for (int i = 0; i <= runs.size(); i++) {
      slots.add(new ArrayList<>());
    }
    for (SessionStep step : steps) {
      Integer after = step.afterRunId() == null ? null : index.get(step.afterRunId());
      slots.get(after != null ? after + 1 : runsBefore(runs, step)).add(step);
    }
    List<Entry> out = new ArrayList<>();
    slots.get(0).forEach(s -> out.add(new Entry(null, s)));
    for (int i = 0; i < runs.size(); i++) {
      out.add(new Entry(runs.get(i), null));
      slots.get(i + 1).forEach(s -> out.add(new Entry(null, s)));
    }
    return out;
  }

  /** How many runs were created before the step (all of them when its time cannot be read). */
  private static int runsBefore(List<RunRecord> runs, SessionStep step) {
    Instant at = instant(step.at());
    int n = 0;
    for (RunRecord r : runs) {
      Instant created = instant(r.createdAt());
      if (at == null || created == null || created.isBefore(at)) {
        n++;
      } else {
        break;
      }
    }
    return n;
  }

  private static Instant instant(String s) {
    try {
      return s == null ? null : Instant.parse(s);
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
