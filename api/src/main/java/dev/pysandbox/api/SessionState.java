package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** Where a session is in its life. */
public enum SessionState {
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

  @JsonValue
  public String wireName() {
    return WireNames.of(this);
  }

  @JsonCreator
  public static SessionState fromWire(String name) {
    return WireNames.parse(SessionState.class, "session state", name);
  }

  @Override
  public String toString() {
    return wireName();
  }
}
