package dev.pysandbox.backend;

/**
 * How a sandbox's process tree ended.
 *
 * @param code the exit code of the sandbox's main process, or {@code null} when a signal ended it
 * @param signal the signal that ended it, or {@code null}
 * @param killedByServer true when the server killed it (timeout, cancel, close)
 * @param hostFailure why it ended when neither its code nor the server ended it but the host
 *     machinery did (its launcher process died, say), or {@code null}
 */
public record SandboxExit(
    Integer code, Integer signal, boolean killedByServer, String hostFailure) {
  public SandboxExit(Integer code, Integer signal, boolean killedByServer) {
    this(code, signal, killedByServer, null);
  }

  public String describe() {
    if (hostFailure != null) {
      return "was lost: " + hostFailure;
    }
    if (code != null) {
      return "exited with code " + code;
    }
    return signal == null ? "ended" : "was killed by signal " + signal;
  }
}
