package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.params;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.TimeSource;
import java.sql.Connection;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records when API keys were last used, at most once per interval per key, on its own thread and
 * its own connection: a request that authenticates never waits for a write (which can wait for
 * another process's write lock), and a key in constant use costs one write a minute. A write that
 * fails, or that finds the queue full, is dropped: the next use after the interval tries again.
 */
final class LastUsedWriter {
  private static final Logger log = LoggerFactory.getLogger(LastUsedWriter.class);
  private static final int QUEUE = 1024;

  private final CachedConnection.SqlSupplier<Connection> connector;
  private final StoreFiles files;
  private final TimeSource time;
  private final long intervalNanos;
  // When this process last asked to write each key (time source nanos).
  private final ConcurrentHashMap<String, Long> asked = new ConcurrentHashMap<>();
  private final ThreadPoolExecutor writer =
      new ThreadPoolExecutor(
          1,
          1,
          0,
          TimeUnit.MILLISECONDS,
          new ArrayBlockingQueue<>(QUEUE),
          DaemonThreads.named("pysandbox-key-last-used"),
          new ThreadPoolExecutor.DiscardPolicy());
  // Opened by the writer's thread on its first write, so that a process that never authenticates
  // (the keys command) never opens it. Only that thread touches it until close().
  private volatile CachedConnection db;

  LastUsedWriter(
      CachedConnection.SqlSupplier<Connection> connector,
      StoreFiles files,
      TimeSource time,
      long intervalNanos) {
    this.connector = connector;
    this.files = files;
    this.time = time;
    this.intervalNanos = intervalNanos;
  }

  /** Notes a use of {@code keyId} now; queues a write when the last one asked is old enough. */
  void used(String keyId) {
    long now = time.nanoTime();
    boolean[] due = {false};
    asked.compute(
        keyId,
        (k, last) -> {
          if (last == null || now - last >= intervalNanos) {
            due[0] = true;
            return now;
          }
          return last;
        });
    if (due[0]) {
      long at = time.millis();
      writer.execute(() -> write(keyId, at));
    }
  }

  private void write(String keyId, long at) {
    try {
      if (db == null) {
        db = new CachedConnection("key store", connector, files);
      }
      // Several processes write the same row: the time only moves forward.
      db.write(
          "UPDATE api_keys SET last_used_at=? WHERE key_id=?"
              + " AND (last_used_at IS NULL OR last_used_at < ?)",
          params(at, keyId, at));
    } catch (java.sql.SQLException | PysandboxException e) {
      log.warn("could not record that API key {} was used: {}", keyId, e.getMessage());
    }
  }

  /** Waits up to {@code waitMillis} for the queued writes, then closes the connection. */
  void close(long waitMillis) {
    writer.shutdown();
    try {
      if (!writer.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
        log.debug("dropped {} pending last-used writes on close", writer.getQueue().size());
        writer.shutdownNow();
        writer.awaitTermination(waitMillis, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (db != null) {
      db.close();
    }
  }
}
