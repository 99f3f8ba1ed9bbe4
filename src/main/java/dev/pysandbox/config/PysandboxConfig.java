package dev.pysandbox.config;

import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.op.ToolGroups;
import java.io.IOException;
import java.io.Reader;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The one configuration object: resolved from CLI flags, then {@code PYSANDBOX_*} environment
 * variables, then a properties file, then built-in defaults; validated when built (impossible
 * values are rejected with the setting's name, risky ones clamped with a warning); immutable.
 */
public final class PysandboxConfig {
  /** Where one value came from, for {@code check_setup} and {@code pysandbox config}. */
  public record Resolved(Setting setting, String value, String source) {}

  private final Map<Setting, Resolved> resolved;
  private final List<String> warnings;
  private final Path dataDir;
  private final Path python;
  private final Path bwrap;
  private final String backend;
  private final String dockerHost;
  private final String dockerImage;
  private final String dockerRuntime;
  private final String sandboxUser;
  private final UidRange sandboxUidRange;
  private final boolean diskQuotaFs;
  private final int timeoutDefault;
  private final int timeoutMax;
  private final int outputLimit;
  private final int codeMaxBytes;
  private final int poolSize;
  private final List<String> poolPreload;
  private final Set<String> toolsEnabled;
  private final int startupTimeout;
  private final String logLevel;
  private final int maxSessions;
  private final int maxSessionsPerTenant;
  private final boolean maxSessionsPerTenantSet;
  private final int sessionTtlMinutes;
  private final int trajectoryRetentionDays;
  private final int sessionRetentionMinutes;
  private final boolean keepWorkspaces;
  private final boolean notebooks;
  private final String approvalPolicy;
  private final String approvalThreshold;
  private final int approvalTtlMinutes;
  private final boolean agentMayApprove;
  private final boolean httpElicitationApproves;
  private final int cancelGraceSeconds;
  private final int uploadMaxBytes;
  private final int readMaxBytes;
  private final int resultOutputLimit;
  private final Limits defaultLimits;
  private final Limits maxLimits;
  private final long outputMaxBytes;
  private final long outputsMaxBytes;
  private final int collectMaxSeconds;
  private final long collectHashMaxBytes;
  private final long keptFilesMaxBytes;
  private final long tenantStorageMaxBytes;
  private final boolean seccomp;
  private final boolean cgroups;
  private final String httpHost;
  private final int httpPort;
  private final boolean httpAuthKeys;
  private final List<String> allowedHosts;
  private final List<String> allowedOrigins;
  private final double rateLimitPerSecond;
  private final int rateLimitBurst;
  private final int httpMaxRequestsPerKey;
  private final int httpMaxLongCallsPerKey;
  private final long httpMinDataRate;
  private final int shutdownGraceSeconds;
  private final TierCatalog tiers;
  private final URI indexUrl;
  private final List<URI> extraIndexUrls;
  private final Path findLinks;
  private final List<String> packageHosts;
  private final int envBuildTimeoutSeconds;
  private final long envMaxBytes;
  private final List<String> networkAllow;
  private final boolean networkAllowPrivate;
  private final long downloadMaxBytes;

  private PysandboxConfig(Map<Setting, Resolved> resolved) {
    this.resolved = Collections.unmodifiableMap(new EnumMap<>(resolved));
    List<String> warn = new ArrayList<>();
    this.dataDir = path(Setting.DATA_DIR, false);
    this.python = path(Setting.PYTHON, true);
    this.bwrap = path(Setting.BWRAP, true);
    this.backend = oneOf(Setting.BACKEND, "auto", "bwrap", "docker");
    this.dockerHost = dockerHost(raw(Setting.DOCKER_HOST).trim());
    this.dockerImage = string(Setting.DOCKER_IMAGE);
    if (!dockerImage.matches("[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}")) {
      throw bad(Setting.DOCKER_IMAGE, "'" + dockerImage + "' is not an image reference");
    }
    this.dockerRuntime = raw(Setting.DOCKER_RUNTIME).trim();
    if (!dockerRuntime.matches("[A-Za-z0-9._-]{0,64}")) {
      throw bad(Setting.DOCKER_RUNTIME, "'" + dockerRuntime + "' is not a runtime name");
    }
    this.sandboxUser = string(Setting.SANDBOX_USER);
    if ("root".equals(sandboxUser) || "0".equals(sandboxUser)) {
      throw bad(Setting.SANDBOX_USER, "must not be root");
    }
    this.sandboxUidRange = uidRange(Setting.SANDBOX_UID_RANGE);
    this.diskQuotaFs = oneOf(Setting.DISK_QUOTA_FS, "auto", "off").equals("auto");
    this.timeoutMax = integer(Setting.TIMEOUT_MAX, 1, 86_400);
    int requestedDefault = integer(Setting.TIMEOUT_DEFAULT, 1, 86_400);
    if (requestedDefault > timeoutMax) {
      warn.add(
          "timeout_default "
              + requestedDefault
              + " is above timeout_max "
              + timeoutMax
              + "; using "
              + timeoutMax);
      requestedDefault = timeoutMax;
    }
    this.timeoutDefault = requestedDefault;
    this.outputLimit = integer(Setting.OUTPUT_LIMIT, 1024, 256 * 1024 * 1024);
    this.codeMaxBytes = integer(Setting.CODE_MAX_BYTES, 1, 10 * 1024 * 1024);
    int pool = integer(Setting.POOL_SIZE, 0, 1000);
    if (pool > 64) {
      warn.add("pool_size " + pool + " would hold many idle sandboxes; using 64");
      pool = 64;
    }
    this.poolSize = pool;
    this.poolPreload = list(Setting.POOL_PRELOAD);
    for (String module : poolPreload) {
      if (!module.matches("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*")) {
        throw bad(Setting.POOL_PRELOAD, "'" + module + "' is not a module name");
      }
    }
    this.startupTimeout = integer(Setting.STARTUP_TIMEOUT, 1, 600);
    this.maxSessions = integer(Setting.MAX_SESSIONS, 1, 100_000);
    int perTenant = integer(Setting.MAX_SESSIONS_PER_TENANT, 0, 100_000);
    this.maxSessionsPerTenant = perTenant == 0 ? maxSessions : Math.min(perTenant, maxSessions);
    this.maxSessionsPerTenantSet = perTenant != 0;
    this.sessionTtlMinutes = integer(Setting.SESSION_TTL, 1, 7 * 24 * 60);
    this.trajectoryRetentionDays = integer(Setting.TRAJECTORY_RETENTION_DAYS, 0, 36_500);
    this.sessionRetentionMinutes = integer(Setting.SESSION_RETENTION, 0, 366 * 24 * 60);
    this.keepWorkspaces = bool(Setting.KEEP_WORKSPACES);
    this.notebooks = bool(Setting.NOTEBOOKS);
    this.approvalPolicy = oneOf(Setting.APPROVAL_POLICY, "off", "findings", "always");
    this.approvalThreshold = oneOf(Setting.APPROVAL_THRESHOLD, "low", "medium", "high", "critical");
    this.approvalTtlMinutes = integer(Setting.APPROVAL_TTL, 1, 7 * 24 * 60);
    this.agentMayApprove = bool(Setting.AGENT_MAY_APPROVE);
    this.httpElicitationApproves = bool(Setting.HTTP_ELICITATION_APPROVES);
    try {
      this.toolsEnabled = ToolGroups.resolve(list(Setting.TOOLS_ENABLED));
    } catch (IllegalArgumentException e) {
      throw bad(Setting.TOOLS_ENABLED, e.getMessage());
    }
    this.cancelGraceSeconds = integer(Setting.CANCEL_GRACE, 0, 600);
    this.uploadMaxBytes = integer(Setting.UPLOAD_MAX_BYTES, 1, 256 << 20);
    this.readMaxBytes = integer(Setting.READ_MAX_BYTES, 1, 256 << 20);
    this.resultOutputLimit = integer(Setting.RESULT_OUTPUT_LIMIT, 1024, Integer.MAX_VALUE - 8);
    long mib = Limits.MIB;
    this.maxLimits =
        new Limits(
            integer(Setting.MEMORY_LIMIT_MAX, 64, 1 << 20) * mib,
            integer(Setting.PIDS_LIMIT_MAX, 8, 1 << 22),
            decimal(Setting.CPU_LIMIT_MAX, 0.01, 1024),
            integer(Setting.DISK_QUOTA_MAX, 1, 1 << 24) * mib,
            integer(Setting.TMP_SIZE, 1, 1 << 20) * mib);
    this.defaultLimits =
        new Limits(
            clampToMax(
                warn,
                Setting.MEMORY_LIMIT,
                integer(Setting.MEMORY_LIMIT, 64, 1 << 20) * mib,
                maxLimits.memoryBytes(),
                mib),
            (int)
                clampToMax(
                    warn,
                    Setting.PIDS_LIMIT,
                    integer(Setting.PIDS_LIMIT, 8, 1 << 22),
                    maxLimits.pids(),
                    1),
            Math.min(decimal(Setting.CPU_LIMIT, 0.01, 1024), maxLimits.cpus()),
            clampToMax(
                warn,
                Setting.DISK_QUOTA,
                integer(Setting.DISK_QUOTA, 1, 1 << 24) * mib,
                maxLimits.diskBytes(),
                mib),
            maxLimits.tmpBytes());
    this.outputMaxBytes = integer(Setting.OUTPUT_MAX, 1, 1 << 20) * mib;
    this.outputsMaxBytes = integer(Setting.OUTPUTS_MAX, 1, 48) * mib;
    this.collectMaxSeconds = integer(Setting.COLLECT_MAX_SECONDS, 1, 86_400);
    this.collectHashMaxBytes = integer(Setting.COLLECT_HASH_MAX, 1, 1 << 24) * mib;
    this.keptFilesMaxBytes = integer(Setting.KEPT_FILES_MAX, 0, 1 << 24) * mib;
    this.tenantStorageMaxBytes = integer(Setting.TENANT_STORAGE_MAX, 0, 1 << 30) * mib;
    this.tiers = tiers(warn);
    this.seccomp = bool(Setting.SECCOMP);
    this.cgroups = bool(Setting.CGROUPS);
    if (sandboxUidRange != null && sandboxUidRange.size() < (long) maxSessions + poolSize + 2) {
      warn.add(
          "sandbox_uid_range "
              + sandboxUidRange
              + " holds "
              + sandboxUidRange.size()
              + " uids, fewer than max_sessions + pool_size + 2 ("
              + (maxSessions + poolSize + 2)
              + "): sandboxes past it will not start");
    }
    this.logLevel = oneOf(Setting.LOG_LEVEL, "error", "warn", "info", "debug", "trace");
    this.httpHost = string(Setting.HTTP_HOST);
    if (!HOST.matcher(httpHost).matches()) {
      throw bad(Setting.HTTP_HOST, "not a host name or IP address");
    }
    this.httpPort = integer(Setting.HTTP_PORT, 0, 65_535);
    this.httpAuthKeys = oneOf(Setting.HTTP_AUTH, "keys", "none").equals("keys");
    if (!httpAuthKeys && !isLoopback(httpHost)) {
      throw bad(
          Setting.HTTP_AUTH,
          "none is allowed only on a loopback http_host (127.0.0.1, ::1, localhost), and"
              + " http_host is "
              + httpHost
              + "; give callers API keys (http_auth=keys) to listen there");
    }
    this.allowedHosts = lowerCase(list(Setting.ALLOWED_HOSTS));
    for (String h : allowedHosts) {
      if (!HOST_PORT.matcher(h).matches()) {
        throw bad(Setting.ALLOWED_HOSTS, "'" + h + "' is not host or host:port");
      }
    }
    List<String> origins = new ArrayList<>();
    for (String o : lowerCase(list(Setting.ALLOWED_ORIGINS))) {
      String origin = o.endsWith("/") ? o.substring(0, o.length() - 1) : o;
      if (!ORIGIN.matcher(origin).matches()) {
        throw bad(
            Setting.ALLOWED_ORIGINS,
            "'" + o + "' is not an origin (scheme://host[:port], no path)");
      }
      origins.add(origin);
    }
    this.allowedOrigins = List.copyOf(origins);
    this.rateLimitPerSecond = decimal(Setting.RATE_LIMIT_PER_SECOND, 0, 1_000_000);
    this.rateLimitBurst = integer(Setting.RATE_LIMIT_BURST, 1, 1_000_000);
    this.httpMaxRequestsPerKey = integer(Setting.HTTP_MAX_REQUESTS_PER_KEY, 1, 256);
    this.httpMaxLongCallsPerKey = integer(Setting.HTTP_MAX_LONG_CALLS_PER_KEY, 1, 256);
    this.httpMinDataRate = integer(Setting.HTTP_MIN_DATA_RATE, 0, 100_000_000);
    this.shutdownGraceSeconds = integer(Setting.SHUTDOWN_GRACE, 0, 3600);
    String index = raw(Setting.INDEX_URL).trim();
    this.indexUrl = index.isEmpty() ? null : indexUrl(Setting.INDEX_URL, index);
    List<URI> extra = new ArrayList<>();
    for (String u : list(Setting.EXTRA_INDEX_URLS)) {
      extra.add(indexUrl(Setting.EXTRA_INDEX_URLS, u));
    }
    this.extraIndexUrls = List.copyOf(extra);
    String links = raw(Setting.FIND_LINKS).trim();
    if (links.isEmpty()) {
      this.findLinks = null;
    } else {
      Path p = expandHome(links);
      if (!p.isAbsolute()) {
        throw bad(Setting.FIND_LINKS, "must be an absolute path");
      }
      try {
        this.findLinks = p.toRealPath();
      } catch (java.io.IOException e) {
        throw bad(Setting.FIND_LINKS, "no such directory");
      }
      if (!java.nio.file.Files.isDirectory(findLinks)) {
        throw bad(Setting.FIND_LINKS, "not a directory");
      }
    }
    this.packageHosts = lowerCase(list(Setting.PACKAGE_HOSTS));
    this.envBuildTimeoutSeconds = integer(Setting.ENV_BUILD_TIMEOUT, 10, 86_400);
    this.envMaxBytes = integer(Setting.ENV_MAX_MB, 1, 1 << 20) * mib;
    this.networkAllow = lowerCase(list(Setting.NETWORK_ALLOW));
    this.networkAllowPrivate = bool(Setting.NETWORK_ALLOW_PRIVATE);
    this.downloadMaxBytes = integer(Setting.DOWNLOAD_MAX_MB, 1, 1 << 20) * mib;
    this.warnings = List.copyOf(warn);
  }

  /** The shipped tiers, changed by {@code tiers_file}, with {@code fs_mounts} and the choice. */
  private TierCatalog tiers(List<String> warn) {
    Map<String, Path> mounts;
    try {
      mounts = HostMounts.parse(raw(Setting.FS_MOUNTS), dataDir);
    } catch (IllegalArgumentException e) {
      throw bad(Setting.FS_MOUNTS, e.getMessage());
    }
    Map<String, Tier> known = TierCatalog.shipped(mounts, defaultLimits, maxLimits);
    String file = raw(Setting.TIERS_FILE).trim();
    if (!file.isEmpty()) {
      Path f = expandHome(file);
      if (!f.isAbsolute()) {
        throw bad(Setting.TIERS_FILE, "must be an absolute path");
      }
      if (!Files.isRegularFile(f)) {
        throw bad(Setting.TIERS_FILE, "no such file");
      }
      try {
        known = TiersFile.apply(f, known, mounts, maxLimits, timeoutMax, warn);
      } catch (IllegalArgumentException e) {
        throw bad(Setting.TIERS_FILE, e.getMessage());
      }
    }
    try {
      return TierCatalog.of(
          known, string(Setting.TIER_DEFAULT), list(Setting.TIERS_ALLOWED), mounts, warn);
    } catch (TierCatalog.Choice e) {
      throw bad(e.setting, e.getMessage());
    }
  }

  /** A host name, an IPv4 address or a bracketed IPv6 address, as in a Host header. */
  private static final String HOST_PART =
      "(?:\\[[0-9a-f:.]+\\]|[a-z0-9_](?:[a-z0-9._-]*[a-z0-9_])?)";

  /** What http_host may be: a host part, or an IPv6 address without brackets. */
  private static final Pattern HOST =
      Pattern.compile(HOST_PART + "|[0-9a-f.]*:[0-9a-f:.]*", Pattern.CASE_INSENSITIVE);

  private static final Pattern HOST_PORT = Pattern.compile(HOST_PART + "(?::[0-9]{1,5})?");
  private static final Pattern ORIGIN =
      Pattern.compile("https?://" + HOST_PART + "(?::[0-9]{1,5})?");

  /**
   * Whether {@code host} is {@code localhost} or a loopback IP literal. No name is looked up: any
   * other name counts as not loopback.
   */
  static boolean isLoopback(String host) {
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.equalsIgnoreCase("localhost")) {
      return true;
    }
    if (!h.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}") && !h.matches("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) {
      return false;
    }
    try {
      return InetAddress.getByName(h).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private static List<String> lowerCase(List<String> values) {
    return values.stream().map(v -> v.toLowerCase(Locale.ROOT)).toList();
  }

  /** Built-in defaults only (and the real home directory). */
  public static PysandboxConfig defaults() {
    return load(Map.of(), Map.of(), null);
  }

  /**
   * Resolves every setting.
   *
   * @param flags values given on the command line, by setting key
   * @param env the process environment ({@code PYSANDBOX_*} variables are read)
   * @param configFile an explicit properties file, or {@code null} for {@code $PYSANDBOX_CONFIG} or
   *     {@code <data_dir>/config.properties} when it exists
   * @throws PysandboxException {@code invalid_argument} naming the setting when a value is bad
   */
  public static PysandboxConfig load(
      Map<String, String> flags, Map<String, String> env, Path configFile) {
    for (String key : flags.keySet()) {
      if (Setting.byKey(key) == null) {
        throw PysandboxException.invalid(
            "unknown setting '" + key + "' (known: " + knownKeys() + ")");
      }
    }
    Map<Setting, Resolved> values = new EnumMap<>(Setting.class);
    Consumer<Setting> fromFlagsOrEnv =
        s -> {
          if (flags.containsKey(s.key())) {
            values.put(s, new Resolved(s, flags.get(s.key()), "flag"));
          } else if (env.containsKey(s.envName())) {
            values.put(s, new Resolved(s, env.get(s.envName()), "env " + s.envName()));
          }
        };
    fromFlagsOrEnv.accept(Setting.DATA_DIR);
    Path file = configFile;
    if (file == null && env.containsKey("PYSANDBOX_CONFIG")) {
      file = Path.of(env.get("PYSANDBOX_CONFIG"));
    }
    boolean explicitFile = file != null;
    if (file == null) {
      String dir =
          values.containsKey(Setting.DATA_DIR)
              ? values.get(Setting.DATA_DIR).value()
              : Setting.DATA_DIR.defaultValue();
      file = expandHome(dir).resolve("config.properties");
    }
    Properties props = new Properties();
    if (Files.isRegularFile(file)) {
      try (Reader r = Files.newBufferedReader(file)) {
        props.load(r);
      } catch (IOException | IllegalArgumentException e) {
        throw PysandboxException.invalid("cannot read config file " + file + ": " + e.getMessage());
      }
    } else if (explicitFile) {
      throw PysandboxException.invalid("config file " + file + " does not exist");
    }
    for (String key : props.stringPropertyNames()) {
      if (Setting.byKey(key) == null) {
        throw PysandboxException.invalid(
            "unknown setting '" + key + "' in " + file + " (known: " + knownKeys() + ")");
      }
    }
    for (Setting s : Setting.values()) {
      fromFlagsOrEnv.accept(s);
      if (!values.containsKey(s)) {
        String v = props.getProperty(s.key());
        values.put(
            s,
            v != null
                ? new Resolved(s, v.trim(), "file " + file)
                : new Resolved(s, s.defaultValue(), "default"));
      }
    }
    return new PysandboxConfig(values);
  }

  private static String knownKeys() {
    return String.join(", ", Arrays.stream(Setting.values()).map(Setting::key).toList());
  }

  static Path expandHome(String value) {
    if (value.equals("~") || value.startsWith("~/")) {
      return Path.of(System.getProperty("user.home") + value.substring(1));
    }
    return Path.of(value);
  }

  // -- parsing -------------------------------------------------------------------------------

  /** An index URL: absolute http or https, a host, no credentials, no fragment. */
  private URI indexUrl(Setting s, String value) {
    URI u;
    try {
      u = new URI(value);
    } catch (java.net.URISyntaxException e) {
      throw bad(s, "'" + value + "' is not a URL");
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(java.util.Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || u.getHost() == null) {
      throw bad(s, "'" + value + "' is not an http or https URL with a host");
    }
    if (u.getRawUserInfo() != null) {
      throw bad(
          s,
          "'"
              + value
              + "' has credentials in it: the build sandbox would see them (use an index that"
              + " needs none, or a wheelhouse in find_links)");
    }
    if (u.getRawFragment() != null || u.getRawQuery() != null) {
      throw bad(s, "'" + value + "' has a query or fragment");
    }
    return u;
  }

  private String raw(Setting s) {
    return resolved.get(s).value();
  }

  private PysandboxException bad(Setting s, String why) {
    Resolved r = resolved.get(s);
    return PysandboxException.invalid(
        "setting "
            + s.key()
            + " = '"
            + r.value()
            + "' (from "
            + r.source()
            + ") is invalid: "
            + why);
  }

  private String string(Setting s) {
    String v = raw(s).trim();
    if (v.isEmpty()) {
      throw bad(s, "must not be empty");
    }
    return v;
  }

  private Path path(Setting s, boolean mustBeAbsolute) {
    Path p = expandHome(string(s));
    if (mustBeAbsolute && !p.isAbsolute()) {
      throw bad(s, "must be an absolute path");
    }
    return p.toAbsolutePath().normalize();
  }

  /** A uid range, or {@code null} for {@code off} (or nothing). */
  private UidRange uidRange(Setting s) {
    String v = raw(s).trim();
    if (v.isEmpty() || v.equalsIgnoreCase("off") || v.equalsIgnoreCase("none")) {
      return null;
    }
    try {
      return UidRange.parse(v);
    } catch (IllegalArgumentException e) {
      throw bad(s, e.getMessage());
    }
  }

  private int integer(Setting s, int min, int max) {
    int v;
    try {
      v = Integer.parseInt(raw(s).trim().replace("_", ""));
    } catch (NumberFormatException e) {
      throw bad(s, "not a whole number");
    }
    if (v < min || v > max) {
      throw bad(s, "must be between " + min + " and " + max);
    }
    return v;
  }

  private String oneOf(Setting s, String... allowed) {
    String v = string(s);
    if (!Arrays.asList(allowed).contains(v)) {
      throw bad(s, "must be one of " + String.join(", ", allowed));
    }
    return v;
  }

  private static long clampToMax(List<String> warn, Setting s, long value, long max, long unit) {
    if (value > max) {
      warn.add(
          s.key()
              + " "
              + value / unit
              + " is above its maximum "
              + max / unit
              + "; using "
              + max / unit);
      return max;
    }
    return value;
  }

  private double decimal(Setting s, double min, double max) {
    double v;
    try {
      v = Double.parseDouble(raw(s).trim());
    } catch (NumberFormatException e) {
      throw bad(s, "not a number");
    }
    if (!(v >= min && v <= max)) {
      throw bad(s, "must be between " + min + " and " + max);
    }
    return v;
  }

  private boolean bool(Setting s) {
    return switch (raw(s).trim().toLowerCase(java.util.Locale.ROOT)) {
      case "true", "yes", "1", "on" -> true;
      case "false", "no", "0", "off" -> false;
      default -> throw bad(s, "must be true or false");
    };
  }

  private List<String> list(Setting s) {
    List<String> out = new ArrayList<>();
    for (String part : raw(s).split(",")) {
      if (!part.isBlank()) {
        out.add(part.trim());
      }
    }
    return List.copyOf(out);
  }

  // -- values --------------------------------------------------------------------------------

  /** {@code index_url}, or {@code null} for none. */
  public URI indexUrl() {
    return indexUrl;
  }

  /** {@code extra_index_urls}. */
  public List<URI> extraIndexUrls() {
    return extraIndexUrls;
  }

  /** {@code find_links}: a real directory path, or {@code null}. */
  public Path findLinks() {
    return findLinks;
  }

  /** {@code package_hosts}. */
  public List<String> packageHosts() {
    return packageHosts;
  }

  public int envBuildTimeoutSeconds() {
    return envBuildTimeoutSeconds;
  }

  public long envMaxBytes() {
    return envMaxBytes;
  }

  /** {@code network_allow}: host patterns, lower-cased (checked by the egress policy). */
  public List<String> networkAllow() {
    return networkAllow;
  }

  public boolean networkAllowPrivate() {
    return networkAllowPrivate;
  }

  public long downloadMaxBytes() {
    return downloadMaxBytes;
  }

  /** Every setting with its value and source, in definition order. */
  public Map<String, Resolved> describe() {
    Map<String, Resolved> out = new LinkedHashMap<>();
    for (Setting s : Setting.values()) {
      out.put(s.key(), resolved.get(s));
    }
    return out;
  }

  /** Values that were clamped while building, one sentence each. */
  public List<String> warnings() {
    return warnings;
  }

  public Path dataDir() {
    return dataDir;
  }

  public Path python() {
    return python;
  }

  public Path bwrap() {
    return bwrap;
  }

  public String backend() {
    return backend;
  }

  /** The docker backend's engine: a {@code unix://} URI. */
  public String dockerHost() {
    return dockerHost;
  }

  /** The docker backend's image. */
  public String dockerImage() {
    return dockerImage;
  }

  /** The docker backend's OCI runtime, or empty for the engine's default. */
  public String dockerRuntime() {
    return dockerRuntime;
  }

  /**
   * The configured engine, checked here; with none configured, {@code DOCKER_HOST} or Docker's
   * default, which the docker backend checks when it is used (a {@code tcp://} DOCKER_HOST meant
   * for other tools must not stop a server that uses bwrap).
   */
  private String dockerHost(String configured) {
    if (configured.isEmpty()) {
      String env = System.getenv("DOCKER_HOST");
      return env == null || env.isBlank() ? "unix:///var/run/docker.sock" : env.trim();
    }
    if (!localEngine(configured)) {
      throw bad(
          Setting.DOCKER_HOST,
          "'"
              + configured
              + "': the docker backend needs an engine on this host (its containers bind host"
              + " directories), as unix:///path/to/socket");
    }
    return configured;
  }

  /** Whether an engine URI is a Unix socket on this host (what the docker backend can use). */
  public static boolean localEngine(String uri) {
    return uri.startsWith("unix:///")
        && uri.length() <= 8 + 107
        && !uri.contains("..")
        && uri.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
  }

  public String sandboxUser() {
    return sandboxUser;
  }

  /**
   * Host uids for sandboxes when the server runs as root, one per live sandbox; empty when every
   * sandbox runs as {@link #sandboxUser()}.
   */
  public java.util.Optional<UidRange> sandboxUidRange() {
    return java.util.Optional.ofNullable(sandboxUidRange);
  }

  /** Whether each workspace gets a file system of its own where the host allows it. */
  public boolean diskQuotaFs() {
    return diskQuotaFs;
  }

  public int timeoutDefaultSeconds() {
    return timeoutDefault;
  }

  public int timeoutMaxSeconds() {
    return timeoutMax;
  }

  public int outputLimitBytes() {
    return outputLimit;
  }

  /** Bytes of stdout and of stderr a run_python tool result carries. */
  public int resultOutputLimitBytes() {
    return resultOutputLimit;
  }

  public int codeMaxBytes() {
    return codeMaxBytes;
  }

  public int poolSize() {
    return poolSize;
  }

  /** The MCP tools to offer ({@code tools_enabled} resolved): every tool's name when unset. */
  public Set<String> toolsEnabled() {
    return toolsEnabled;
  }

  public List<String> poolPreload() {
    return poolPreload;
  }

  public int startupTimeoutSeconds() {
    return startupTimeout;
  }

  public String logLevel() {
    return logLevel;
  }

  public int maxSessions() {
    return maxSessions;
  }

  /** Sessions one tenant may have open at once (at most {@link #maxSessions()}). */
  public int maxSessionsPerTenant() {
    return maxSessionsPerTenant;
  }

  /**
   * Whether {@code max_sessions_per_tenant} was set (not 0): else a server shared by several
   * tenants gives each a fair share of {@code max_sessions}.
   */
  public boolean maxSessionsPerTenantSet() {
    return maxSessionsPerTenantSet;
  }

  public int sessionTtlMinutes() {
    return sessionTtlMinutes;
  }

  /** Days a trajectory file is kept after its last line; 0 for ever. */
  /** Minutes a session's end is remembered (0: not at all). */
  public int sessionRetentionMinutes() {
    return sessionRetentionMinutes;
  }

  public int trajectoryRetentionDays() {
    return trajectoryRetentionDays;
  }

  /** {@code off}, {@code findings} or {@code always}: which runs wait for approval. */
  public String approvalPolicy() {
    return approvalPolicy;
  }

  /** The least severe finding that makes a run wait ({@code low} … {@code critical}). */
  public String approvalThreshold() {
    return approvalThreshold;
  }

  /** Minutes an approval may wait before its run expires. */
  public int approvalTtlMinutes() {
    return approvalTtlMinutes;
  }

  /** Whether agents get the approve_run and deny_run tools. */
  public boolean agentMayApprove() {
    return agentMayApprove;
  }

  /**
   * Whether an MCP client over HTTP may decide a held run at its elicitation prompt (its answer is
   * recorded as client-asserted); over stdio the local client always may.
   */
  public boolean httpElicitationApproves() {
    return httpElicitationApproves;
  }

  /** Whether every finished run's notebooks are written as it finishes. */
  public boolean notebooks() {
    return notebooks;
  }

  public boolean keepWorkspaces() {
    return keepWorkspaces;
  }

  public int cancelGraceSeconds() {
    return cancelGraceSeconds;
  }

  /** The limits a sandbox gets unless a session asks for others. */
  public Limits defaultLimits() {
    return defaultLimits;
  }

  /** The most a session may ask for. */
  public Limits maxLimits() {
    return maxLimits;
  }

  /** The tiers: every one known, the default, those callers may ask for, the host directories. */
  public TierCatalog tiers() {
    return tiers;
  }

  /** A run whose stdout or stderr passes this many bytes is killed. */
  public long outputMaxBytes() {
    return outputMaxBytes;
  }

  /** Most bytes of JSON a run's {@code __outputs__} may hold ({@code outputs_max_mb}). */
  public long outputsMaxBytes() {
    return outputsMaxBytes;
  }

  /** Seconds spent on a run's files once its code has ended ({@code collect_max_seconds}). */
  public int collectMaxSeconds() {
    return collectMaxSeconds;
  }

  /** Bytes hashed per run when its files are collected ({@code collect_hash_max_mb}). */
  public long collectHashMaxBytes() {
    return collectHashMaxBytes;
  }

  /** Bytes of data kept with one run at most ({@code kept_files_max_mb}); 0 keeps none. */
  public long keptFilesMaxBytes() {
    return keptFilesMaxBytes;
  }

  /**
   * Bytes of files all of a tenant's runs keep together ({@code tenant_storage_max_mb}); 0: any.
   */
  public long tenantStorageMaxBytes() {
    return tenantStorageMaxBytes;
  }

  public boolean seccomp() {
    return seccomp;
  }

  /** Whether each sandbox gets its own cgroup where the host allows one. */
  public boolean cgroups() {
    return cgroups;
  }

  /** The address the HTTP face listens on. */
  public String httpHost() {
    return httpHost;
  }

  /** The port the HTTP face listens on; 0 for one the system picks. */
  public int httpPort() {
    return httpPort;
  }

  /**
   * True when every HTTP request but the health checks needs an API key; false ({@code
   * http_auth=none}, loopback only) when every caller is the tenant {@code local}.
   */
  public boolean httpAuthKeys() {
    return httpAuthKeys;
  }

  /**
   * Host headers the HTTP face answers, lower case, each {@code host} (any port) or {@code
   * host:port}; empty for the defaults (the bound address, localhost and 127.0.0.1 on its port).
   */
  public List<String> allowedHosts() {
    return allowedHosts;
  }

  /** Origins ({@code scheme://host[:port]}, lower case) allowed besides the same origin. */
  public List<String> allowedOrigins() {
    return allowedOrigins;
  }

  /** Sustained HTTP requests per second per API key; 0 for no limit. */
  public double rateLimitPerSecond() {
    return rateLimitPerSecond;
  }

  /** HTTP requests one API key may make at once. */
  public int rateLimitBurst() {
    return rateLimitBurst;
  }

  /** HTTP requests one API key (or address without a valid key) may have in flight. */
  public int httpMaxRequestsPerKey() {
    return httpMaxRequestsPerKey;
  }

  /** Of those, waits, downloads and uploads. */
  public int httpMaxLongCallsPerKey() {
    return httpMaxLongCallsPerKey;
  }

  /** Bytes per second under which a slow body, reader or origin is cut off; 0 for none. */
  public long httpMinDataRate() {
    return httpMinDataRate;
  }

  /** Seconds requests in flight may take to finish once the server is told to stop. */
  public int shutdownGraceSeconds() {
    return shutdownGraceSeconds;
  }

  /** Largest upload in bytes (decoded). */
  public int uploadMaxBytes() {
    return uploadMaxBytes;
  }

  /** Most bytes one read_artifact returns (and holds in memory); its max_size_bytes is capped. */
  public int readMaxBytes() {
    return readMaxBytes;
  }
}
