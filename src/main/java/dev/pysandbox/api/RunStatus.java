package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** The life of a run. {@code running} is the only state a finished run never returns to. */
public enum RunStatus {
  PENDING,
  AWAITING_APPROVAL,
  RUNNING,
  SUCCEEDED,
  FAILED,
  TIMED_OUT,
  CANCELLED,
  INTERRUPTED,
  REJECTED;

  @JsonValue
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static RunStatus fromWire(String name) {
    for (RunStatus s : values()) {
      if (s.wireName().equals(name)) {
        return s;
      }
    }
    throw PysandboxException.invalid(
        "unknown run status '"
            + name
            + "' (expected one of pending, awaiting_approval, running, succeeded, failed,"
            + " timed_out, cancelled, interrupted, rejected)");
  }

  /** True once the run can no longer change. */
  public boolean isFinal() {
    return this != PENDING && this != AWAITING_APPROVAL && this != RUNNING;
  }
}
