package dev.pysandbox.core.events;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.Subscription;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A run's output, as it happens, in {@code <data_dir>/runs/<run id>/events.ndjson}, for a process
 * that shares the data directory but not the server's memory ({@code pysandbox runs watch}): the
 * server appends the run's {@code stdout}, {@code stderr} and {@code lagged} events there (one JSON
 * object a line, at most {@link #MAX_BYTES}), off the run's path (a subscriber of its own, drained
 * on the core's pool: a slow disk makes it lag, never the run), and deletes the file a while after
 * the run ends. Only a run still going after {@link #AFTER_MILLIS} is spilled (from its first event
 * on): a quick run, which nobody could watch, costs nothing here. {@link Tail} reads it.
 */
public final class EventSpill {
  private static final Logger log = LoggerFactory.getLogger(EventSpill.class);
  public static final String FILE = "events.ndjson";
  static final long MAX_BYTES = 8L << 20;
  static final long AFTER_MILLIS = 250;

  private EventSpill() {}

  /** Where a run's events are spilled, next to its kept files. */
  public static Path fileOf(Path runFiles) {
    return runFiles.resolveSibling(FILE);
  }

  /**
   * Starts spilling {@code log}'s events to {@code file}; deleted {@code keepMillis} after done.
   */
  static void start(
      RunEventLog log, Path file, Executor pool, ScheduledExecutorService timer, long keepMillis) {
    Writer w = new Writer(file, pool, timer, keepMillis);
    w.subscription = log.subscribe(0, w::available);
    try {
      timer.schedule(
          () -> {
            if (log.ended()) {
              w.subscription.close();
            } else {
              w.armed = true;
              w.available();
            }
          },
          AFTER_MILLIS,
          TimeUnit.MILLISECONDS);
    } catch (RuntimeException e) {
      w.subscription.close(); // the core is closing
    }
  }

  private static final class Writer {
    private final Path file;
    private final Executor pool;
    private final ScheduledExecutorService timer;
    private final long keepMillis;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile boolean armed;
    private volatile Subscription subscription;
    private OutputStream out;
    private long written;
    private boolean done;

    Writer(Path file, Executor pool, ScheduledExecutorService timer, long keepMillis) {
      this.file = file;
      this.pool = pool;
      this.timer = timer;
      this.keepMillis = keepMillis;
    }

    void available() {
      if (armed && scheduled.compareAndSet(false, true)) {
        try {
          pool.execute(this::drain);
        } catch (RuntimeException e) {
          scheduled.set(false);
        }
      }
    }

    private synchronized void drain() {
      scheduled.set(false);
      Subscription s = subscription;
      if (s == null || done) {
        return;
      }
      List<RunEvent> batch;
      while (!(batch = s.poll(256)).isEmpty()) {
        for (RunEvent e : batch) {
          if (e.isDone()) {
            finish(s);
            return;
          }
          if (e instanceof RunEvent.Stdout
              || e instanceof RunEvent.Stderr
              || e instanceof RunEvent.Lagged) {
            write(e);
          }
        }
      }
    }

    private void write(RunEvent e) {
      if (written >= MAX_BYTES) {
        return;
      }
      try {
        if (out == null) {
          Files.createDirectories(file.getParent());
          out =
              Files.newOutputStream(
                  file,
                  StandardOpenOption.CREATE,
                  StandardOpenOption.TRUNCATE_EXISTING,
                  StandardOpenOption.WRITE,
                  LinkOption.NOFOLLOW_LINKS);
        }
        byte[] line = (Json.write(e.toWire()) + "\n").getBytes(StandardCharsets.UTF_8);
        out.write(line);
        out.flush();
        written += line.length;
      } catch (IOException | RuntimeException x) {
        log.debug("spilling run events to {}: {}", file, x.toString());
        written = MAX_BYTES;
      }
    }

    private void finish(Subscription s) {
      done = true;
      s.close();
      try {
        if (out != null) {
          out.close();
        }
      } catch (IOException e) {
        log.debug("closing {}: {}", file, e.toString());
      }
      try {
        timer.schedule(this::delete, keepMillis, TimeUnit.MILLISECONDS);
      } catch (RuntimeException e) {
        delete();
      }
    }

    private void delete() {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        log.debug("deleting {}: {}", file, e.toString());
      }
    }
  }

  /** Reads the events another process spills, from where it last stopped. */
  static final class Tail {
    private final Path file;
    private long offset;
    private final StringBuilder partial = new StringBuilder();

    Tail(Path file) {
      this.file = file;
    }

    /** The complete events written since the last call (output and lagged only). */
    List<RunEvent> next() {
      List<RunEvent> events = new ArrayList<>();
      try (SeekableByteChannel ch =
          Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
        ch.position(offset);
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        int n;
        while (bytes.size() < MAX_BYTES && (n = ch.read(buf)) > 0) {
          bytes.write(buf.array(), 0, n);
          buf.clear();
        }
        byte[] read = bytes.toByteArray();
        int end = lastNewline(read);
        if (end < 0) {
          return events;
        }
        offset += end + 1;
        for (String line : new String(read, 0, end, StandardCharsets.UTF_8).split("\n")) {
          RunEvent e = parse(line);
          if (e != null) {
            events.add(e);
          }
        }
      } catch (NoSuchFileException e) {
        // not written yet, or gone
      } catch (IOException | RuntimeException e) {
        LoggerFactory.getLogger(Tail.class).debug("reading {}: {}", file, e.toString());
      }
      return events;
    }

    private static int lastNewline(byte[] b) {
      for (int i = b.length - 1; i >= 0; i--) {
        if (b[i] == '\n') {
          return i;
        }
      }
      return -1;
    }

    private static RunEvent parse(String line) {
      if (line.isBlank()) {
        return null;
      }
      try {
        JsonNode n = Json.mapper().readTree(line);
        long seq = n.path("seq").asLong();
        return switch (n.path("type").asText()) {
          case "stdout" -> new RunEvent.Stdout(seq, n.path("text").asText());
          case "stderr" -> new RunEvent.Stderr(seq, n.path("text").asText());
          case "lagged" -> new RunEvent.Lagged(seq, n.path("skipped_bytes").asLong());
          default -> null;
        };
      } catch (IOException e) {
        return null;
      }
    }
  }
}
