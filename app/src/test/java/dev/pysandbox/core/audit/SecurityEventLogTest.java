package dev.pysandbox.core.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.pysandbox.Await;
import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import dev.pysandbox.util.TimeSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The security event log's writing, against a real SQLite store: off the caller's path, bounded,
 * kept while the store cannot take events, written out at close; never throwing.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Fast
class SecurityEventLogTest {
  @TempDir Path dir;
  RunStore store;
  ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  ExecutorService pool = Executors.newCachedThreadPool();

  /** A pool that runs nothing until told: the drain is held back, so the queue fills. */
  static final class HeldPool implements Executor {
    final List<Runnable> held = new ArrayList<>();

    @Override
    public synchronized void execute(Runnable task) {
      held.add(task);
    }

    synchronized void runAll() {
      List<Runnable> tasks = new ArrayList<>(held);
      held.clear();
      tasks.forEach(Runnable::run);
    }
  }

  @BeforeEach
  void open() {
    store = JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"));
  }

  @AfterEach
  void close() {
    timer.shutdownNow();
    pool.shutdownNow();
    store.close();
  }

  private List<SecurityEvent> stored() {
    return store.securityEvents("local", SecurityEventQuery.newest());
  }

  private static void died(SecurityEventLog log, String session) {
    log.record("local", SecurityEvent.Kind.SANDBOX_DIED, session, null, Map.of("reason", "x"));
  }

  @Test
  void aFullQueue_dropsTheEvent_countsIt_andNeitherBlocksNorThrows() {
    HeldPool held = new HeldPool();
    SecurityEventLog log =
        new SecurityEventLog(() -> store, TimeSource.system(), held, timer, true, 2);
    for (int i = 0; i < 5; i++) {
      died(log, "s" + i);
    }
    assertThat(log.counts().recorded()).containsEntry("sandbox_died", 5L);
    assertThat(log.counts().notStored()).isEqualTo(3);
    assertThat(log.queued()).isEqualTo(2);
    assertThat(held.held).as("one drain scheduled, not one per event").hasSize(1);

    held.runAll();
    assertThat(stored()).extracting(SecurityEvent::sessionId).containsExactlyInAnyOrder("s0", "s1");
  }

  @Test
  void whileTheStoreCannotTakeThem_eventsWait_andAreWrittenOnceItCan() throws Exception {
    AtomicBoolean available = new AtomicBoolean(false);
    AtomicInteger refusals = new AtomicInteger();
    Supplier<RunStore> flaky =
        () -> {
          if (!available.get()) {
            refusals.incrementAndGet();
            throw new PysandboxException(ErrorCode.STORE_UNAVAILABLE, "disk full (test)");
          }
          return store;
        };
    SecurityEventLog log = new SecurityEventLog(flaky, TimeSource.system(), pool, timer, true);
    for (int i = 0; i < 3; i++) {
      died(log, "s" + i);
    }
    // The drain in the background tried the store and was refused: the events wait.
    Await.until("the store refused the drain", refusals::get, n -> n > 0);
    log.flush();
    assertThat(log.queued()).isEqualTo(3);
    assertThat(stored()).isEmpty();

    available.set(true);
    // Written, then taken off the queue: both are waited for (the queue empties a moment later).
    Await.until("the queued events are written", this::stored, l -> l.size() == 3);
    Await.until("the queue is empty", log::queued, n -> n == 0);
    // Each once.
    assertThat(stored())
        .extracting(SecurityEvent::sessionId)
        .containsExactlyInAnyOrder("s0", "s1", "s2");
    assertThat(log.queued()).isZero();
    assertThat(log.counts().notStored()).isZero();
  }

  @Test
  void close_writesWhatIsQueued_andLaterEventsAreCountedButNotStored() {
    HeldPool held = new HeldPool();
    SecurityEventLog log =
        new SecurityEventLog(() -> store, TimeSource.system(), held, timer, true);
    died(log, "a");
    died(log, "b");
    log.close();
    assertThat(stored()).hasSize(2);

    died(log, "late");
    assertThat(log.counts().recorded()).containsEntry("sandbox_died", 3L);
    assertThat(log.counts().notStored()).isEqualTo(1);
    held.runAll();
    assertThat(stored()).hasSize(2);
  }

  @Test
  void record_neverThrows_whateverItIsGiven() throws Exception {
    SecurityEventLog log =
        new SecurityEventLog(() -> store, TimeSource.system(), pool, timer, true);
    assertThatCode(() -> log.record("local", null, null, null, null)).doesNotThrowAnyException();
    Map<String, Object> notJson = Map.of("value", new Object());
    assertThatCode(() -> log.record("local", SecurityEvent.Kind.IMPORT_DENIED, null, null, notJson))
        .doesNotThrowAnyException();
    died(log, "after");
    Await.until(
        "the event after them is written",
        this::stored,
        l -> l.stream().anyMatch(e -> "after".equals(e.sessionId())));
    assertThat(stored()).extracting(SecurityEvent::sessionId).contains("after");
  }

  @Test
  void aCoreThatOnlyLooks_countsButStoresNothing() {
    HeldPool held = new HeldPool();
    SecurityEventLog log =
        new SecurityEventLog(() -> store, TimeSource.system(), held, timer, false);
    died(log, "s");
    assertThat(log.counts().recorded()).containsEntry("sandbox_died", 1L);
    assertThat(held.held).isEmpty();
    assertThat(log.queued()).isZero();
  }
}
