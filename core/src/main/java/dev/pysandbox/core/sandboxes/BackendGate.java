package dev.pysandbox.core.sandboxes;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.SandboxBackend;

/**
 * Refuses what needs a sandbox while the backend can start none, before anything is made for it:
 * {@code backend_unavailable} with the backend's reason. One rule for every part that asks.
 */
public final class BackendGate {
  private BackendGate() {}

  /** Throws {@code backend_unavailable} with the reason when no sandbox can be started. */
  public static void require(SandboxBackend backend) {
    backend
        .unavailableReason()
        .ifPresent(
            why -> {
              throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, why);
            });
  }
}
