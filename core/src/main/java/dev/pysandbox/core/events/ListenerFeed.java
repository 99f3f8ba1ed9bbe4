package dev.pysandbox.core.events;

import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.Subscription;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands a run's events to its caller's {@link RunListener} on the core's threads, one drain at a
 * time (a count of wake-ups, so none is lost between a poll that found nothing and the end of the
 * drain), never on the thread that reads the sandboxes.
 */
public final class ListenerFeed implements EventSink {
  private static final Logger log = LoggerFactory.getLogger(ListenerFeed.class);
  private static final int BATCH = 256;

  private final RunListener listener;
  private final Executor executor;
  private final AtomicInteger pending = new AtomicInteger();
  private volatile Subscription subscription;

  private ListenerFeed(RunListener listener, Executor executor) {
    this.listener = listener;
    this.executor = executor;
  }

  /** Feeds {@code listener} every event of {@code events} from {@code started} on. */
  public static void start(RunEventLog events, RunListener listener, Executor executor) {
    ListenerFeed feed = new ListenerFeed(listener, executor);
    feed.subscription = events.subscribe(0, feed);
    feed.available();
  }

  @Override
  public void available() {
    if (pending.getAndIncrement() == 0) {
      try {
        executor.execute(this::drain);
      } catch (RejectedExecutionException e) {
        subscription.close(); // the core is closing
      }
    }
  }

  private void drain() {
    int missed = 1;
    while (true) {
      List<RunEvent> batch;
      while (!(batch = subscription.poll(BATCH)).isEmpty()) {
        for (RunEvent e : batch) {
          try {
            listener.event(e);
          } catch (RuntimeException ex) {
            log.warn("a run listener failed on {} of {}: {}", e.type(), subscription.runId(), ex);
          }
        }
      }
      missed = pending.addAndGet(-missed);
      if (missed == 0) {
        return;
      }
    }
  }
}
