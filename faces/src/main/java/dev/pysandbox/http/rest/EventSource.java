package dev.pysandbox.http.rest;

import dev.pysandbox.api.ResultOutputLimit;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.Subscription;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What an {@link EventStream} writes: the events of one run or one agent run, taken by polling (the
 * stream's drain polls when its sink was told there is more). Written once for both, so that the
 * stream's machinery — non-blocking writes, heartbeats, the client going away — is the same for
 * each.
 */
interface EventSource extends AutoCloseable {
  /** One event as the wire has it: its number (SSE's {@code id:}), its type and its JSON. */
  record Event(long seq, String type, Map<String, Object> wire) {}

  /** What the events are of, for the log: "run run_…", "agent run agr_…". */
  String name();

  /**
   * The events ready now, in order, at most {@code maxEvents}: empty when there are none yet, and
   * always empty once the last ({@code done}) has been taken.
   */
  List<Event> poll(int maxEvents);

  /** True once the last event has been taken, or when there was none left to give. */
  boolean finished();

  /** Stops following: nothing more is told. Idempotent. */
  @Override
  void close();

  /**
   * A run's events ({@link Subscription}), {@code done} with its output cut to {@code
   * resultOutputLimit} as the blocking answer is.
   */
  static EventSource of(Subscription subscription, int resultOutputLimit) {
    return new EventSource() {
      @Override
      public String name() {
        return "run " + subscription.runId();
      }

      @Override
      public List<Event> poll(int maxEvents) {
        List<RunEvent> batch = subscription.poll(maxEvents);
        List<Event> out = new ArrayList<>(batch.size());
        for (RunEvent e : batch) {
          Map<String, Object> wire = e.toWire();
          if (e.isDone()) {
            ResultOutputLimit.apply(wire, resultOutputLimit);
          }
          out.add(new Event(e.seq(), e.type(), wire));
        }
        return out;
      }

      @Override
      public boolean finished() {
        return subscription.finished();
      }

      @Override
      public void close() {
        subscription.close();
      }
    };
  }
}
