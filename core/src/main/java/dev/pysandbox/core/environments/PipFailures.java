package dev.pysandbox.core.environments;

import dev.pysandbox.backend.SandboxSpec;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads what a failed build printed for a cause on this host rather than the package index: pip
 * reports a file it could not read or write with the operating system's error ({@code ERROR: Could
 * not install packages due to an OSError: [Errno 13] Permission denied: '/mnt/host/wheels'}). Such
 * a failure is not retryable and names pip's own line, even when the indexes probed after it could
 * not be reached (which used to make any failure "the package index could not be reached").
 */
final class PipFailures {
  /**
   * An operating-system error on a local file: EPERM, ENOENT, EACCES, EEXIST, ENOTDIR, EISDIR,
   * ENOSPC, EROFS, ENAMETOOLONG, EDQUOT (never a connection's errno).
   */
  private static final Pattern LOCAL =
      Pattern.compile(
          "(?m)^[^\\n]*(?:OSError|PermissionError|FileNotFoundError|FileExistsError"
              + "|NotADirectoryError|IsADirectoryError): \\[Errno"
              + " (?:1|2|13|17|20|21|28|30|36|122)\\][^\\n]*$");

  private static final String WHEELS = SandboxSpec.HostMount.ROOT + "/wheels";

  private PipFailures() {}

  /** pip's line for a local error (its {@code ERROR:} line first), or {@code null}. */
  static String localError(String printed) {
    Matcher m = LOCAL.matcher(printed);
    String first = null;
    while (m.find()) {
      String line = m.group().strip();
      if (line.startsWith("ERROR:")) {
        return line;
      }
      if (first == null) {
        first = line;
      }
    }
    return first;
  }

  /** The line, saying which host directory the wheelhouse's path in the sandbox is. */
  static String explain(String line, Path findLinks) {
    return findLinks != null && line.contains(WHEELS)
        ? line + " (" + WHEELS + " is the wheelhouse, find_links = " + findLinks + ")"
        : line;
  }

  /** What pip printed, without the lines of the index probes the build makes after a failure. */
  static String withoutIndexProbes(String printed) {
    return printed
        .lines()
        .filter(l -> !l.startsWith(BuildScript.UNREACHABLE_MARK))
        .collect(Collectors.joining("\n"));
  }
}
