package dev.pysandbox.config;

import dev.pysandbox.api.Limits;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tiers this server knows, which of them callers may ask for, and the default. The shipped
 * tiers are defined here; a {@code tiers_file} ({@link TiersFile}) changes them and adds others.
 * Immutable once built.
 */
public final class TierCatalog {
  public static final String BASIC = "basic";
  public static final String DATA_SCIENCE = "data_science";
  public static final String FILESYSTEM = "filesystem";
  public static final String NETWORK = "network";

  /**
   * What user code in the shipped tiers may not import: sockets and TLS, the standard library's
   * network clients and servers, C calls from Python (ctypes, cffi), pseudo-terminals, and the
   * common third-party network clients. Libraries that import these themselves (pandas imports
   * socket and ctypes) still work: the policy judges the module that imports, not the module.
   */
  public static final List<String> SHIPPED_DENY =
      List.of(
          "socket",
          "_socket",
          "ssl",
          "_ssl",
          "socketserver",
          "http.client",
          "http.server",
          "urllib.request",
          "xmlrpc",
          "ftplib",
          "poplib",
          "imaplib",
          "nntplib",
          "smtplib",
          "telnetlib",
          "ctypes",
          "_ctypes",
          "cffi",
          "_cffi_backend",
          "pty",
          "requests",
          "urllib3",
          "httpx",
          "aiohttp",
          "websocket",
          "websockets",
          "paramiko",
          "pycurl",
          "OpenSSL");

  /**
   * What user code in the network tier may not import: C calls from Python and pseudo-terminals.
   * Its network modules are allowed: its only way out is the egress proxy, to network_allow.
   */
  public static final List<String> NETWORK_DENY =
      List.of("ctypes", "_ctypes", "cffi", "_cffi_backend", "pty");

  private final Map<String, Tier> tiers;
  private final Tier defaultTier;
  private final List<String> allowed;
  private final Map<String, Path> hostMounts;

  private TierCatalog(
      Map<String, Tier> tiers, Tier defaultTier, List<String> allowed, Map<String, Path> mounts) {
    this.tiers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(tiers));
    this.defaultTier = defaultTier;
    this.allowed = List.copyOf(allowed);
    this.hostMounts = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(mounts));
  }

  /**
   * The shipped tiers for a server with these limits and host directories: {@code basic} (no
   * network, no host files, the server's default limits), {@code data_science} (as basic, with at
   * least 2048 MiB, 256 processes and 2 cores, within the maxima), {@code filesystem} (as basic,
   * with every {@code fs_mounts} directory) and {@code network} (as basic, with a way out through
   * the egress proxy to {@code network_allow}, and network modules importable).
   */
  static Map<String, Tier> shipped(Map<String, Path> mounts, Limits defaults, Limits max) {
    Map<String, Tier> m = new LinkedHashMap<>();
    m.put(
        BASIC,
        new Tier(
            BASIC,
            "No network and no host files; user code may not import network, C-call or terminal"
                + " modules.",
            Tier.NETWORK_NONE,
            Map.of(),
            SHIPPED_DENY,
            null,
            defaults,
            null,
            null));
    Limits larger =
        new Limits(
            atLeast(defaults.memoryBytes(), 2048 * Limits.MIB, max.memoryBytes()),
            (int) atLeast(defaults.pids(), 256, max.pids()),
            Math.min(Math.max(defaults.cpus(), 2.0), max.cpus()),
            defaults.diskBytes(),
            defaults.tmpBytes());
    m.put(
        DATA_SCIENCE,
        new Tier(
            DATA_SCIENCE,
            "As basic, with larger default limits for heavier analysis.",
            Tier.NETWORK_NONE,
            Map.of(),
            SHIPPED_DENY,
            null,
            larger,
            null,
            null));
    m.put(
        FILESYSTEM,
        new Tier(
            FILESYSTEM,
            "As basic, with every fs_mounts directory read-only at /mnt/host/<name>.",
            Tier.NETWORK_NONE,
            mounts,
            SHIPPED_DENY,
            null,
            defaults,
            null,
            null));
    m.put(
        NETWORK,
        new Tier(
            NETWORK,
            "As basic, with a way out through the server's egress proxy to the hosts in"
                + " network_allow only (HTTP_PROXY and HTTPS_PROXY are set); network modules may"
                + " be imported.",
            Tier.NETWORK_EGRESS,
            Map.of(),
            NETWORK_DENY,
            null,
            defaults,
            null,
            null));
    return m;
  }

  private static long atLeast(long value, long floor, long max) {
    return Math.min(Math.max(value, floor), max);
  }

  /**
   * @param tiers every known tier, shipped ones first
   * @param defaultName {@code tier_default}
   * @param allowedNames {@code tiers_allowed}
   * @param warn where a tier allowed but not available is reported (it is left out)
   * @throws Choice when the default or an allowed name is wrong, naming the setting
   */
  static TierCatalog of(
      Map<String, Tier> tiers,
      String defaultName,
      List<String> allowedNames,
      Map<String, Path> mounts,
      List<String> warn) {
    List<String> allowed = new ArrayList<>();
    for (String name : allowedNames) {
      Tier t = tiers.get(name);
      if (t == null) {
        throw new Choice(Setting.TIERS_ALLOWED, "unknown tier '" + name + "'" + known(tiers));
      }
      if (!t.available()) {
        warn.add("tiers_allowed names '" + name + "', which is refused: " + t.unavailable());
      } else if (!allowed.contains(name)) {
        allowed.add(name);
      }
    }
    if (allowed.isEmpty()) {
      throw new Choice(Setting.TIERS_ALLOWED, "no tier that can be used is named");
    }
    Tier d = tiers.get(defaultName);
    if (d == null) {
      throw new Choice(Setting.TIER_DEFAULT, "unknown tier '" + defaultName + "'" + known(tiers));
    }
    if (!d.available()) {
      throw new Choice(Setting.TIER_DEFAULT, d.unavailable());
    }
    if (!allowed.contains(defaultName)) {
      throw new Choice(
          Setting.TIER_DEFAULT,
          "tier '" + defaultName + "' is not in tiers_allowed (" + String.join(",", allowed) + ")");
    }
    return new TierCatalog(tiers, d, allowed, mounts);
  }

  /** A wrong {@code tier_default} or {@code tiers_allowed}: the setting and why. */
  static final class Choice extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    final transient Setting setting;

    Choice(Setting setting, String message) {
      super(message);
      this.setting = setting;
    }
  }

  static String known(Map<String, Tier> tiers) {
    return " (known: " + String.join(", ", tiers.keySet()) + ")";
  }

  /** The tier with this name, or {@code null}. */
  public Tier get(String name) {
    return tiers.get(name);
  }

  /** Every known tier: the shipped ones, then those the tiers file adds. */
  public Collection<Tier> all() {
    return tiers.values();
  }

  public List<String> names() {
    return List.copyOf(tiers.keySet());
  }

  /** The tier of a run or session that names none ({@code tier_default}). */
  public Tier defaultTier() {
    return defaultTier;
  }

  /** The tiers a caller may ask for ({@code tiers_allowed}, available ones only). */
  public List<String> allowed() {
    return allowed;
  }

  /** {@code fs_mounts}: name to real host path. */
  public Map<String, Path> hostMounts() {
    return hostMounts;
  }

  /** For {@code check_setup}: the default, the allowed, the server's maxima, every tier. */
  public Map<String, Object> describe(Limits max) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("default", defaultTier.name());
    m.put("allowed", allowed);
    m.put("maxima", max.describe());
    Map<String, Object> all = new LinkedHashMap<>();
    for (Tier t : tiers.values()) {
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("allowed", allowed.contains(t.name()));
      d.putAll(t.describe());
      all.put(t.name(), d);
    }
    m.put("tiers", all);
    return m;
  }
}
