package dev.pysandbox.core.trajectories;

import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.TrajectoryEvent;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.files.NativeFs;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.TimeSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trajectories: every call a face answered, one JSON line ({@link TrajectoryEvents}) appended
 * to its session's file or its day's ({@link DataLayout#sessionTrajectory}, {@link
 * DataLayout#dayTrajectory}). Off the call's path: {@link #record} measures the call and queues the
 * line (at most {@value #QUEUE_CAPACITY}; past that the line is dropped and counted, with a warning
 * at most once a minute, so a slow or full disk never holds a call), and one daemon thread writes
 * the queue out.
 *
 * <p>Files are opened for each batch with {@code O_APPEND}, never through a link ({@code
 * O_NOFOLLOW}; a directory on the way that is a link, or a file that is not a regular one, loses
 * its lines with a warning), created 0600 in 0700 directories, and each line is one {@code write}:
 * servers sharing the data directory interleave whole lines, and a line a full disk cut short is
 * taken back (or ended), so the lines after it stay readable. Files whose last line is older than
 * {@code trajectory_retention_days} are deleted at start and daily ({@link TrajectoryRetention}).
 */
public final class TrajectoryLog {
  private static final Logger log = LoggerFactory.getLogger(TrajectoryLog.class);
  static final int QUEUE_CAPACITY = 10_000;
  private static final int BATCH = 256;
  private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
  private static final long CLOSE_WAIT_MILLIS = 1_000;
  private static final FileAttribute<Set<PosixFilePermission>> FILE_MODE =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
  private static final byte[] NEWLINE = {'\n'};
  private static final FileAttribute<Set<PosixFilePermission>> DIR_MODE =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

  /** One line for one file; {@link #STOP} ends the writer. */
  private record Line(Path file, byte[] bytes) {}

  private static final Line STOP = new Line(null, null);

  private final DataLayout layout;
  private final TimeSource time;
  private final boolean enabled;
  private final BlockingQueue<Line> queue;
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong droppedSinceWarning = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();
  // Files whose last line a full disk cut short and that could not be taken back: ended first.
  private final Set<Path> unterminated = ConcurrentHashMap.newKeySet();
  private final Throttle droppedWarning;
  private final Throttle lostWarning;
  private volatile boolean closed;
  // Set by close() when the writer did not finish in time: it stops after the batch it is writing
  // (never in the middle of a line) and counts what is still queued as lost.
  private volatile boolean abandon;
  private Thread writer;

  /**
   * @param enabled false for a core that only looks (it records nothing)
   */
  public TrajectoryLog(DataLayout layout, TimeSource time, boolean enabled) {
    this(layout, time, enabled, QUEUE_CAPACITY);
  }

  public TrajectoryLog(DataLayout layout, TimeSource time, boolean enabled, int capacity) {
    this.layout = layout;
    this.time = time;
    this.enabled = enabled;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.droppedWarning = new Throttle(time);
    this.lostWarning = new Throttle(time);
  }

  /**
   * Starts the writer and, unless {@code retentionDays} is 0, the retention sweep: now, on {@code
   * pool}, then daily.
   */
  public synchronized void start(ScheduledExecutorService timer, Executor pool, int retentionDays) {
    if (!enabled || writer != null || closed) {
      return;
    }
    // At nice 19, as the audit trail's writer: appending lines must not take the CPU from runs.
    writer =
        DaemonThreads.newThread(
            "pysandbox-trajectory",
            () -> {
              NativeFs.backgroundPriority();
              writeLoop();
            });
    writer.start();
    if (retentionDays > 0) {
      Runnable sweep =
          () ->
              TrajectoryRetention.sweep(
                  layout.trajectoriesDir(), time.instant().minus(Duration.ofDays(retentionDays)));
      timer.scheduleWithFixedDelay(() -> pool.execute(sweep), 0, 1, TimeUnit.DAYS);
    }
  }

  /** Measures the call and queues its line; never blocks, never throws. */
  public void record(String tenant, CallRecord call) {
    if (!enabled || closed || call == null) {
      return;
    }
    try {
      Instant began = time.instant().minusNanos(Math.max(0, call.durationNanos()));
      TrajectoryEvent e = TrajectoryEvents.of(tenant, call, began);
      Path file =
          e.sessionId() != null
              ? layout.sessionTrajectory(tenant, e.sessionId())
              : layout.dayTrajectory(tenant, LocalDate.ofInstant(began, ZoneOffset.UTC));
      if (!queue.offer(new Line(file, TrajectoryEvents.line(e)))) {
        dropped.incrementAndGet();
        droppedSinceWarning.incrementAndGet();
        warnDropped();
      }
    } catch (RuntimeException x) {
      log.debug("trajectory: the call {} was not recorded", call.tool(), x);
    }
  }

  /** Lines not recorded because the queue was full, since start. */
  long dropped() {
    return dropped.get();
  }

  /** Lines not written because their file could not be, since start. */
  long lost() {
    return lost.get();
  }

  /**
   * Writes what is queued (waiting at most a second), then stops the writer; what it could not
   * write by then is counted as lost (whole lines: the batch being written is finished).
   * Idempotent.
   */
  public void close() {
    Thread w;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      w = writer;
    }
    if (w == null) {
      return;
    }
    try {
      // The writer makes room as it writes; record() adds nothing once closed.
      queue.offer(STOP, CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
      w.join(CLOSE_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (w.isAlive()) {
      long before = lost.get();
      abandon = true;
      joinQuietly(w);
      log.warn("trajectory: {} lines not written in time at stop", lost.get() - before);
    }
  }

  private static void joinQuietly(Thread w) {
    try {
      w.join(CLOSE_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (w.isAlive()) {
      w.interrupt(); // a file system that hangs: the process is stopping anyway
    }
  }

  private void warnDropped() {
    if (droppedWarning.due()) {
      log.warn(
          "trajectory: {} calls not recorded since the last warning: the writer is {} lines"
              + " behind (is the disk slow or full?)",
          droppedSinceWarning.getAndSet(0),
          queue.size());
    }
  }

  private void writeLoop() {
    List<Line> batch = new ArrayList<>(BATCH);
    while (true) {
      try {
        batch.add(queue.take());
      } catch (InterruptedException e) {
        return;
      }
      queue.drainTo(batch, BATCH - 1);
      boolean stop = batch.remove(STOP);
      write(batch);
      batch.clear();
      if (stop) {
        return;
      }
      if (abandon) {
        queue.drainTo(batch);
        batch.remove(STOP);
        lost.addAndGet(batch.size());
        return;
      }
    }
  }

  /** Appends each file's lines in order, opening each file once per batch. */
  private void write(List<Line> batch) {
    Map<Path, List<byte[]>> byFile = new LinkedHashMap<>();
    for (Line l : batch) {
      byFile.computeIfAbsent(l.file(), f -> new ArrayList<>()).add(l.bytes());
    }
    byFile.forEach(
        (file, lines) -> {
          int done = 0;
          try (FileChannel ch = open(file)) {
            if (unterminated.contains(file)) {
              append(ch, file, NEWLINE);
              unterminated.remove(file);
            }
            for (byte[] line : lines) {
              append(ch, file, line); // one write(2) for a whole line, short of a full disk
              done++;
            }
          } catch (IOException | RuntimeException e) {
            lost.addAndGet(lines.size() - done);
            warnLost(file, lines.size() - done, e);
          }
        });
  }

  /**
   * Appends one line. A write cut short (a full disk) is taken back when nothing was appended after
   * it; else (another server appended meanwhile) the line is ended before the next one is written,
   * so that a full disk loses whole lines, never the line after a half one.
   */
  private void append(FileChannel ch, Path file, byte[] line) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(line);
    long before = ch.size();
    try {
      while (b.hasRemaining()) {
        ch.write(b);
      }
    } catch (IOException e) {
      int written = b.position();
      if (written > 0) {
        try {
          if (ch.size() == before + written) {
            ch.truncate(before);
          } else {
            unterminated.add(file);
          }
        } catch (IOException again) {
          unterminated.add(file);
          e.addSuppressed(again);
        }
      }
      throw e;
    }
  }

  private void warnLost(Path file, int lines, Exception e) {
    if (lostWarning.due()) {
      log.warn("trajectory: {} lines not written to {}: {}", lines, file, e.toString());
    } else {
      log.debug("trajectory: {} lines not written to {}: {}", lines, file, e.toString());
    }
  }

  /** At most once a minute. */
  private static final class Throttle {
    private final TimeSource time;
    private final AtomicLong last;

    Throttle(TimeSource time) {
      this.time = time;
      this.last = new AtomicLong(time.nanoTime() - WARN_EVERY_NANOS);
    }

    boolean due() {
      long now = time.nanoTime();
      long l = last.get();
      return now - l >= WARN_EVERY_NANOS && last.compareAndSet(l, now);
    }
  }

  /** Opens {@code file} to append, never through a link, never anything but a regular file. */
  private FileChannel open(Path file) throws IOException {
    Path dir = file.getParent();
    directory(layout.trajectoriesDir());
    directory(dir.getParent());
    directory(dir);
    try {
      BasicFileAttributes a =
          Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!a.isRegularFile()) {
        // A FIFO would block the writer in open(2); a link is never followed.
        throw new IOException(file + " is not a regular file (a link or a special file)");
      }
    } catch (NoSuchFileException e) {
      // created below
    }
    return FileChannel.open(
        file,
        Set.of(
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.APPEND,
            LinkOption.NOFOLLOW_LINKS),
        FILE_MODE);
  }

  private static void directory(Path dir) throws IOException {
    try {
      Files.createDirectory(dir, DIR_MODE);
    } catch (FileAlreadyExistsException e) {
      // checked below
    }
    if (!Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
        .isDirectory()) {
      throw new IOException(dir + " is not a directory (a link?)");
    }
  }
}
