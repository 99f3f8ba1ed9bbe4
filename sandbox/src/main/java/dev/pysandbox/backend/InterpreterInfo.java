package dev.pysandbox.backend;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What the configured interpreter is, found once by running it on the host with a fixed probe.
 *
 * @param path the configured path
 * @param version e.g. {@code 3.11.2}
 * @param realExecutable the binary after symlinks
 * @param basePrefix {@code sys.base_prefix}
 * @param sysPath the import path a normal start would have (site directories included)
 * @param packages versions of the data-science packages, {@code null} values when absent
 * @param distributions every distribution the interpreter sees, as sorted {@code name==version}
 *     lines (names normalised as PEP 503 does)
 * @param envHash {@link #envHashOf} the distributions
 */
public record InterpreterInfo(
    Path path,
    String version,
    Path realExecutable,
    Path basePrefix,
    List<String> sysPath,
    Map<String, String> packages,
    List<String> distributions,
    String envHash) {

  /**
   * The environment's identity: sha256 of the {@code distributions} lines joined by newlines, so
   * that two runs with the same hash saw the same packages at the same versions. Computed once per
   * probe, not per run.
   */
  public static String envHashOf(List<String> distributions) {
    return dev.pysandbox.util.Sha256.hex(String.join("\n", distributions));
  }
}
