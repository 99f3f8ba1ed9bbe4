package dev.pysandbox.api;

/** Where a session is in its life. */
public enum SessionState implements WireEnum {
  /** Its sandbox is being made. */
  STARTING,
  /** Ready for the next run. */
  IDLE,
  /** A run or a call is using it. */
  BUSY,
  /** Its sandbox died (see {@code dead_reason}); only closing it is left. */
  DEAD,
  /** Closed: its sandbox and workspace are gone. */
  CLOSED;

  @Override
  public String toString() {
    return wireName();
  }
}
