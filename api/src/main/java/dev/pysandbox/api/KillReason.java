package dev.pysandbox.api;

/** Why the server stopped a run's sandbox before the code ended. */
public enum KillReason implements WireEnum {
  /** The run's wall-clock limit ({@code timeout_seconds}) passed. */
  TIMEOUT,
  /** The sandbox reached its memory limit (the kernel's OOM killer, or the server's check). */
  MEMORY_LIMIT,
  /** The sandbox reached its process limit. */
  PIDS_LIMIT,
  /** The workspace outgrew its disk quota. */
  DISK_QUOTA,
  /** More output arrived than the server keeps for a run. */
  OUTPUT_LIMIT,
  /** The sandbox broke the worker protocol (a frame too large, out of order or malformed). */
  PROTOCOL_VIOLATION;

  @Override
  public String toString() {
    return wireName();
  }
}
