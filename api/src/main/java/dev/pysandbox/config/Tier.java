package dev.pysandbox.config;

import dev.pysandbox.api.Limits;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One tier: a named bundle of what a sandbox may reach and what its code may import, with the
 * default limits of its sandboxes. Made by {@link TierCatalog} from the shipped definitions and the
 * {@code tiers_file}; immutable.
 *
 * @param name the tier's name (an id, {@link dev.pysandbox.api.Ids#REGEX})
 * @param description one sentence, for {@code check_setup}
 * @param network {@value #NETWORK_NONE}, the only network a sandbox has today, or {@value
 *     #NETWORK_EGRESS} for the network tier, which is not available until the packages-and-network
 *     work brings the egress proxy
 * @param mounts host directories bound read-only at {@code /mnt/host/<name>}, by name, each the
 *     real path found when the configuration was built, in order
 * @param importDeny modules (each with its submodules) that user code may not import
 * @param importAllow when not {@code null}, the only top-level modules user code may import
 * @param limits the default limits of its sandboxes, within the server's maxima
 * @param unavailable why the tier cannot be used, or {@code null} when it can
 * @param timeoutSeconds the timeout of a run in this tier that names none (within {@code
 *     timeout_max}), or {@code null} for the server's {@code timeout_default}
 */
public record Tier(
    String name,
    String description,
    String network,
    Map<String, Path> mounts,
    List<String> importDeny,
    List<String> importAllow,
    Limits limits,
    String unavailable,
    Integer timeoutSeconds) {
  public static final String NETWORK_NONE = "none";
  public static final String NETWORK_EGRESS = "egress";

  /**
   * Where a tier's host directories appear inside the sandbox (the backend's {@code
   * HostMount.ROOT}).
   */
  public static final String MOUNT_ROOT = "/mnt/host";

  public Tier {
    mounts = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(mounts));
    importDeny = List.copyOf(importDeny);
    importAllow = importAllow == null ? null : List.copyOf(importAllow);
  }

  public boolean available() {
    return unavailable == null;
  }

  /** The tier as {@code check_setup} shows it (host paths included, as the data directory is). */
  public Map<String, Object> describe() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("description", description);
    m.put("available", available());
    if (unavailable != null) {
      m.put("unavailable_reason", unavailable);
    }
    m.put("network", network);
    Map<String, Object> shown = new LinkedHashMap<>();
    mounts.forEach(
        (mount, path) -> {
          Map<String, Object> one = new LinkedHashMap<>();
          one.put("host_path", path.toString());
          one.put("path", MOUNT_ROOT + "/" + mount);
          one.put("mode", "ro");
          shown.put(mount, one);
        });
    m.put("mounts", shown);
    Map<String, Object> imports = new LinkedHashMap<>();
    imports.put("deny", importDeny);
    imports.put("allow", importAllow);
    m.put("imports", imports);
    m.put("limits", limits.describe());
    m.put("timeout_seconds", timeoutSeconds); // null: the server's timeout_default
    return m;
  }
}
