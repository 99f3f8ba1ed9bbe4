package dev.pysandbox.backend;

/**
 * How a sandbox's process tree ended.
 *
 * @param code the exit code of the sandbox's main process, or {@code null} when a signal ended it
 * @param signal the signal that ended it, or {@code null}
 * @param killedByServer true when the server killed it (timeout, cancel, close)
 */
public record SandboxExit(Integer code, Integer signal, boolean killedByServer) {
  public String describe() {
    if (code != null) {
      return "exited with code " + code;
    }
    return signal == null ? "ended" : "was killed by signal " + signal;
  }
}
