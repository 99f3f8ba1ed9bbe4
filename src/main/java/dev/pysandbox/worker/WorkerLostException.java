package dev.pysandbox.worker;

/**
 * The runner stopped answering: its control channel closed (the process exited or was killed) or it
 * broke the protocol. Carries what the request had produced until then.
 */
public final class WorkerLostException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient WorkerReply partial;

  public WorkerLostException(String message, WorkerReply partial) {
    super(message);
    this.partial = partial;
  }

  /** The request's output so far; the frame is empty. */
  public WorkerReply partial() {
    return partial;
  }
}
