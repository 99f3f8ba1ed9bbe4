package dev.pysandbox.api;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One thing that happened in a run, as a client watching it live sees it. A run's events are
 * numbered from 1 ({@link #seq()}) in the order they happened: {@code started} first, then its
 * output ({@code stdout}, {@code stderr}, {@code display}) as the code produces it, then {@code
 * result} and {@code error} when it has them, and {@code done} last, carrying the run's record. A
 * subscriber that fell behind the run's bounded event buffer gets {@link Lagged} in place of what
 * it missed. Immutable values.
 */
public sealed interface RunEvent {
  /** Position in the run's events, from 1; a resumed subscription continues after it. */
  long seq();

  /** The wire name of each kind of event. */
  Map<Class<? extends RunEvent>, String> TYPES =
      Map.of(
          Started.class, "started",
          Stdout.class, "stdout",
          Stderr.class, "stderr",
          Display.class, "display",
          Result.class, "result",
          Failed.class, "error",
          Lagged.class, "lagged",
          Done.class, "done");

  /** The wire name: {@code started}, {@code stdout}, … {@code done} (from {@link #TYPES}). */
  default String type() {
    return TYPES.get(getClass());
  }

  /** True for the last event of a run ({@link Done}). */
  default boolean isDone() {
    return this instanceof Done;
  }

  /**
   * The event as it goes on the wire: {@code type}, {@code seq}, then its fields in snake_case
   * ({@link Done}: the fields of its run record, as {@code get_run} answers them).
   */
  default Map<String, Object> toWire() {
    Map<String, Object> wire = new LinkedHashMap<>();
    wire.put("type", type());
    wire.put("seq", seq());
    Map<String, Object> fields = Json.toMap(this instanceof Done d ? d.run() : this);
    fields.remove("seq");
    wire.putAll(fields);
    return wire;
  }

  /** The run is recorded and about to start. */
  record Started(long seq, String runId, String sessionId) implements RunEvent {}

  /** Text the code wrote to standard output (UTF-8 decoded; one read's worth, not a line). */
  record Stdout(long seq, String text) implements RunEvent {}

  /** Text the code wrote to standard error. */
  record Stderr(long seq, String text) implements RunEvent {}

  /** A MIME bundle the code displayed ({@code display()}, a matplotlib figure). */
  record Display(long seq, Map<String, Object> data) implements RunEvent {}

  /** The MIME bundle of the trailing expression's value. */
  record Result(long seq, Map<String, Object> data) implements RunEvent {}

  /** The exception the run ended with (or the limit that stopped it), as the record has it. */
  record Failed(long seq, String name, String value, String traceback) implements RunEvent {}

  /**
   * The subscriber fell behind: the events up to and including {@link #seq()} were dropped from the
   * run's buffer before it took them; it continues with newer ones. The run's record still keeps
   * the head and tail of the output.
   *
   * @param skippedBytes the bytes of output (text and displays) it missed
   */
  record Lagged(long seq, long skippedBytes) implements RunEvent {}

  /** The run ended: its record as {@code get_run} gives it (without the code). */
  record Done(long seq, RunRecord run) implements RunEvent {}
}
