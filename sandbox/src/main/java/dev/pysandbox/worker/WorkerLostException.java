package dev.pysandbox.worker;

/**
 * The runner stopped answering: its control channel closed (the process exited or was killed) or it
 * broke the protocol. Carries what the request had produced until then.
 */
public final class WorkerLostException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient WorkerReply partial;
  private final boolean protocolViolation;

  public WorkerLostException(String message, WorkerReply partial) {
    this(message, partial, false);
  }

  /**
   * @param protocolViolation true when the server cut the runner off for breaking the protocol
   */
  public WorkerLostException(String message, WorkerReply partial, boolean protocolViolation) {
    super(message);
    this.partial = partial;
    this.protocolViolation = protocolViolation;
  }

  /** True when the server cut the runner off for breaking the protocol (the message says how). */
  public boolean protocolViolation() {
    return protocolViolation;
  }

  /** The request's output so far; the frame is empty. */
  public WorkerReply partial() {
    return partial;
  }
}
