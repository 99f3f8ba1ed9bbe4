package dev.pysandbox.core.files;

import dev.pysandbox.util.TimeSource;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * What the server may spend on a workspace's files once a run's code has ended (the snapshot, the
 * hashing, the copies): a deadline ({@code collect_max_seconds}), bytes hashed ({@code
 * collect_hash_max_mb}; a hole counts as the zeros a reader sees, since hashing them costs as much)
 * and a cancel. The code decides what the files hold, so without these a few sparse files of a
 * terabyte each would keep the server hashing for hours. Files past the budget are listed as not
 * hashed or kept, with {@link #exhausted()}'s reason. One budget per run (or per listing); one
 * thread uses it.
 */
public final class CollectBudget {
  /** Thrown by a hash or a copy that ran out of budget midway; nothing of it is kept. */
  public static final class Spent extends Exception {
    private static final long serialVersionUID = 1L;

    Spent(String reason) {
      super(reason, null, false, false);
    }
  }

  /**
   * The settings a budget is made from.
   *
   * @param keptMaxBytes bytes of data kept with one run at most ({@code kept_files_max_mb})
   */
  public record Bounds(int maxSeconds, long hashMaxBytes, long keptMaxBytes) {
    static final Bounds NONE = new Bounds(Integer.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE);
  }

  private final TimeSource clock;
  private final Bounds limits;
  private final long deadlineNanos;
  private final BooleanSupplier cancelled;
  private long hashLeft;
  private int skipped;
  private String firstReason;

  private CollectBudget(TimeSource clock, Bounds limits, BooleanSupplier cancelled) {
    this.clock = clock;
    this.limits = limits;
    this.cancelled = cancelled;
    this.hashLeft = limits.hashMaxBytes();
    long now = clock.nanoTime();
    long span = TimeUnit.SECONDS.toNanos(limits.maxSeconds());
    this.deadlineNanos = span > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + span;
  }

  /** A budget starting now; {@code cancelled} is asked as the work goes (a run's cancel_run). */
  public static CollectBudget start(TimeSource clock, Bounds limits, BooleanSupplier cancelled) {
    return new CollectBudget(clock, limits, cancelled);
  }

  /** No bounds, for the server's own copies of files it made (a wheel it built). */
  public static CollectBudget unlimited() {
    return new CollectBudget(TimeSource.system(), Bounds.NONE, () -> false);
  }

  /** Bytes of data kept with one run at most. */
  public long keptMaxBytes() {
    return limits.keptMaxBytes();
  }

  /** Why nothing more may be hashed or copied, or {@code null} while there is budget. */
  String exhausted() {
    if (cancelled.getAsBoolean()) {
      return "not hashed or kept: the run was cancelled while its files were collected";
    }
    if (clock.nanoTime() - deadlineNanos > 0) {
      return "not hashed or kept: collecting the run's files took the "
          + limits.maxSeconds()
          + " s the server gives it (collect_max_seconds)";
    }
    if (hashLeft <= 0) {
      return hashReason();
    }
    return null;
  }

  /**
   * Whether a file of {@code apparentBytes} can still be hashed whole; if not, why (the file is
   * then not read at all). A file that fits is charged as it is read ({@link #take}).
   */
  public String refuse(long apparentBytes) {
    String why = exhausted();
    if (why == null && apparentBytes > hashLeft) {
      why = hashReason();
    }
    return why;
  }

  /** Charges {@code bytes} hashed (data or holes); throws once the budget is gone. */
  void take(long bytes) throws Spent {
    hashLeft -= bytes;
    String why = exhausted();
    if (why != null || hashLeft < 0) {
      throw new Spent(why != null ? why : hashReason());
    }
  }

  /** Counts a file listed as not hashed or kept for a reason of this budget's. */
  public void skipped(String reason) {
    skipped++;
    if (firstReason == null) {
      firstReason = reason;
    }
  }

  /** True when the run's cancel cut the collection short. */
  public boolean cancelled() {
    return skipped > 0 && cancelled.getAsBoolean();
  }

  /** A line for the run's message when files were skipped for the budget, else {@code null}. */
  public String note() {
    if (skipped == 0) {
      return null;
    }
    return skipped
        + (skipped == 1 ? " file was" : " files were")
        + " "
        + firstReason
        + " (each listed in artifacts with the reason)";
  }

  private String hashReason() {
    return "not hashed or kept: the run's files passed the "
        + limits.hashMaxBytes() / dev.pysandbox.api.Limits.MIB
        + " MiB the server hashes per run (collect_hash_max_mb; a sparse file counts at its"
        + " apparent size)";
  }
}
