package dev.pysandbox.api;

import java.util.List;
import java.util.Map;

/**
 * What {@code check_setup} and {@code pysandbox doctor} report: whether code can run here, and if
 * not, what is missing and how to install it.
 *
 * @param ready true when a sandbox can be started
 * @param dataDir the data directory in use
 * @param backends every backend tried, in order, with why it is unavailable
 * @param interpreter path, version and the data-science packages' versions
 * @param sandboxUser the host user sandboxes run as
 * @param limits the limits applied to runs
 * @param tiers the tiers: {@code default}, {@code allowed}, the server's {@code maxima}, and every
 *     known tier's policy under {@code tiers} (network, read-only host directories, import policy,
 *     default limits, whether it is allowed and available)
 * @param pool warm pool size, ready sandboxes and preloaded modules; while its starts fail, also
 *     {@code last_failure} ({@code message}, {@code at}, {@code consecutive}, {@code retry_at})
 * @param problems what is missing, each with the command that fixes it
 * @param settings every setting with its value and where it came from
 */
public record SetupReport(
    boolean ready,
    String dataDir,
    List<BackendStatus> backends,
    Map<String, Object> interpreter,
    String sandboxUser,
    Map<String, Object> limits,
    Map<String, Object> tiers,
    Map<String, Object> pool,
    List<String> problems,
    Map<String, String> settings) {

  /** One backend's availability. */
  public record BackendStatus(String name, boolean available, String reason) {}
}
