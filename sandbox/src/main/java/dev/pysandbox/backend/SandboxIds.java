package dev.pysandbox.backend;

/**
 * A sandbox's id is {@code sbx-<instance>-<suffix>}, where {@code instance} is the id of the server
 * process that started it: every backend names its sandboxes so, and names their workspace
 * directories after them, so that a starting server can tell what dead servers left behind from
 * what live ones hold.
 */
public final class SandboxIds {
  private static final String PREFIX = "sbx-";

  private SandboxIds() {}

  /** The id of the {@code n}th sandbox that server instance {@code instanceId} starts. */
  public static String of(String instanceId, long n) {
    return PREFIX + instanceId + "-" + Long.toHexString(n);
  }

  /**
   * The server instance a sandbox id, a workspace directory's name, or a path or command line that
   * starts with one, belongs to; {@code null} when it names no sandbox.
   */
  public static String instanceOf(String sandboxId) {
    if (sandboxId == null || !sandboxId.startsWith(PREFIX)) {
      return null;
    }
    String[] parts = sandboxId.split("[-/ ]");
    return parts.length >= 3 ? parts[1] : null;
  }
}
