package dev.pysandbox.api;

/** The life of a run. {@code running} is the only state a finished run never returns to. */
public enum RunStatus implements WireEnum {
  PENDING,
  AWAITING_APPROVAL,
  RUNNING,
  SUCCEEDED,
  FAILED,
  TIMED_OUT,
  CANCELLED,
  INTERRUPTED,
  REJECTED,
  /** A person (or, where allowed, the agent) declined to let it run: nothing ran. */
  DENIED,
  /** Its approval was not decided within {@code approval_ttl}: nothing ran. */
  EXPIRED,
  /** {@code run_python(dry_run=true)}: analysed, not run, never recorded. */
  DRY_RUN;

  @Override
  public String toString() {
    return wireName();
  }

  /** True once the run can no longer change. */
  public boolean isFinal() {
    return this != PENDING && this != AWAITING_APPROVAL && this != RUNNING;
  }
}
