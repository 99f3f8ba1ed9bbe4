package dev.pysandbox.backend;

/**
 * What every backend's set-up finds that {@link AbstractSandboxBackend} reports for it: the
 * interpreter and who sandboxes run as. The backend's own findings are the rest of its set-up.
 */
public interface BackendSetup {
  /** The interpreter sandboxes run, as probed at set-up. */
  InterpreterInfo python();

  /** Who sandboxes run as on the host, in a sentence ({@link SandboxBackend#sandboxUsers()}). */
  String users();
}
