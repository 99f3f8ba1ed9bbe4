package dev.pysandbox.config;

import dev.pysandbox.api.Limits;
import dev.pysandbox.api.op.ToolGroups;
import dev.pysandbox.config.PysandboxConfig.Resolved;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Builds the {@link PysandboxConfig} from resolved raw values: each setting read by {@link
 * SettingValues}, then what settings mean together — a default above its maximum is clamped with a
 * warning, {@code http_auth=none} is refused off loopback, a uid range too small for the sessions
 * and the pool is warned about, the tiers are built over the limits. Settings are read in a fixed
 * order, so that of several bad values the same one is reported first.
 */
final class ConfigReader {
  private static final long MIB = Limits.MIB;

  private ConfigReader() {}

  /**
   * @param raw every setting's raw value and its source
   * @param envApiKey {@code PYSANDBOX_AGENT_API_KEY}, or {@code null}: the agent provider's key
   */
  static PysandboxConfig read(Map<ConfigSetting, Resolved> raw, String envApiKey) {
    Map<ConfigSetting, Resolved> resolved = Collections.unmodifiableMap(new LinkedHashMap<>(raw));
    SettingValues v = new SettingValues(resolved);
    List<String> warn = new ArrayList<>();
    Path dataDir = v.path(Setting.DATA_DIR, false);
    Path python = v.path(Setting.PYTHON, true);
    Path bwrap = v.path(Setting.BWRAP, true);
    String backend = v.oneOf(Setting.BACKEND, "auto", "bwrap", "docker");
    String dockerHost = v.dockerHost(Setting.DOCKER_HOST);
    String dockerImage = v.string(Setting.DOCKER_IMAGE);
    if (!dockerImage.matches("[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}")) {
      throw v.bad(Setting.DOCKER_IMAGE, "'" + dockerImage + "' is not an image reference");
    }
    String dockerRuntime = v.raw(Setting.DOCKER_RUNTIME).trim();
    if (!dockerRuntime.matches("[A-Za-z0-9._-]{0,64}")) {
      throw v.bad(Setting.DOCKER_RUNTIME, "'" + dockerRuntime + "' is not a runtime name");
    }
    String sandboxUser = v.string(Setting.SANDBOX_USER);
    if ("root".equals(sandboxUser) || "0".equals(sandboxUser)) {
      throw v.bad(Setting.SANDBOX_USER, "must not be root");
    }
    UidRange uidRange = v.uidRange(Setting.SANDBOX_UID_RANGE);
    boolean diskQuotaFs = v.oneOf(Setting.DISK_QUOTA_FS, "auto", "off").equals("auto");
    int timeoutMax = v.integer(Setting.TIMEOUT_MAX, 1, 86_400);
    int timeoutDefault = v.integer(Setting.TIMEOUT_DEFAULT, 1, 86_400);
    if (timeoutDefault > timeoutMax) {
      warn.add(
          "timeout_default "
              + timeoutDefault
              + " is above timeout_max "
              + timeoutMax
              + "; using "
              + timeoutMax);
      timeoutDefault = timeoutMax;
    }
    int outputLimit = v.integer(Setting.OUTPUT_LIMIT, 1024, 256 * 1024 * 1024);
    int codeMaxBytes = v.integer(Setting.CODE_MAX_BYTES, 1, 10 * 1024 * 1024);
    int poolSize = v.integer(Setting.POOL_SIZE, 0, 1000);
    if (poolSize > 64) {
      warn.add("pool_size " + poolSize + " would hold many idle sandboxes; using 64");
      poolSize = 64;
    }
    List<String> poolPreload = v.list(Setting.POOL_PRELOAD);
    for (String module : poolPreload) {
      if (!module.matches("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*")) {
        throw v.bad(Setting.POOL_PRELOAD, "'" + module + "' is not a module name");
      }
    }
    int startupTimeout = v.integer(Setting.STARTUP_TIMEOUT, 1, 600);
    int maxSessions = v.integer(Setting.MAX_SESSIONS, 1, 100_000);
    int perTenant = v.integer(Setting.MAX_SESSIONS_PER_TENANT, 0, 100_000);
    int sessionTtl = v.integer(Setting.SESSION_TTL, 1, 7 * 24 * 60);
    int trajectoryRetention = v.integer(Setting.TRAJECTORY_RETENTION_DAYS, 0, 36_500);
    int sessionRetention = v.integer(Setting.SESSION_RETENTION, 0, 366 * 24 * 60);
    boolean keepWorkspaces = v.bool(Setting.KEEP_WORKSPACES);
    boolean notebooks = v.bool(Setting.NOTEBOOKS);
    String approvalPolicy = v.oneOf(Setting.APPROVAL_POLICY, "off", "findings", "always");
    String approvalThreshold =
        v.oneOf(Setting.APPROVAL_THRESHOLD, "low", "medium", "high", "critical");
    int approvalTtl = v.integer(Setting.APPROVAL_TTL, 1, 7 * 24 * 60);
    boolean agentMayApprove = v.bool(Setting.AGENT_MAY_APPROVE);
    boolean httpElicitationApproves = v.bool(Setting.HTTP_ELICITATION_APPROVES);
    Set<String> toolsEnabled;
    try {
      toolsEnabled = ToolGroups.resolve(v.list(Setting.TOOLS_ENABLED));
    } catch (IllegalArgumentException e) {
      throw v.bad(Setting.TOOLS_ENABLED, e.getMessage());
    }
    int cancelGrace = v.integer(Setting.CANCEL_GRACE, 0, 600);
    int uploadMax = v.integer(Setting.UPLOAD_MAX_BYTES, 1, 256 << 20);
    int readMax = v.integer(Setting.READ_MAX_BYTES, 1, 256 << 20);
    int resultOutputLimit = v.integer(Setting.RESULT_OUTPUT_LIMIT, 1024, Integer.MAX_VALUE - 8);
    Limits maxLimits =
        new Limits(
            v.integer(Setting.MEMORY_LIMIT_MAX, 64, 1 << 20) * MIB,
            v.integer(Setting.PIDS_LIMIT_MAX, 8, 1 << 22),
            v.decimal(Setting.CPU_LIMIT_MAX, 0.01, 1024),
            v.integer(Setting.DISK_QUOTA_MAX, 1, 1 << 24) * MIB,
            v.integer(Setting.TMP_SIZE, 1, 1 << 20) * MIB);
    Limits defaultLimits = defaultLimits(v, maxLimits, warn);
    long outputMax = v.integer(Setting.OUTPUT_MAX, 1, 1 << 20) * MIB;
    long outputsMax = v.integer(Setting.OUTPUTS_MAX, 1, 48) * MIB;
    int collectMaxSeconds = v.integer(Setting.COLLECT_MAX_SECONDS, 1, 86_400);
    long collectHashMax = v.integer(Setting.COLLECT_HASH_MAX, 1, 1 << 24) * MIB;
    long keptFilesMax = v.integer(Setting.KEPT_FILES_MAX, 0, 1 << 24) * MIB;
    long tenantStorageMax = v.integer(Setting.TENANT_STORAGE_MAX, 0, 1 << 30) * MIB;
    TierCatalog tiers = tiers(v, dataDir, defaultLimits, maxLimits, timeoutMax, warn);
    boolean seccomp = v.bool(Setting.SECCOMP);
    boolean cgroups = v.bool(Setting.CGROUPS);
    if (uidRange != null && uidRange.size() < (long) maxSessions + poolSize + 2) {
      warn.add(
          "sandbox_uid_range "
              + uidRange
              + " holds "
              + uidRange.size()
              + " uids, fewer than max_sessions + pool_size + 2 ("
              + (maxSessions + poolSize + 2)
              + "): sandboxes past it will not start");
    }
    String logLevel = v.oneOf(Setting.LOG_LEVEL, "error", "warn", "info", "debug", "trace");
    String httpHost = HttpAddresses.host(v);
    int httpPort = v.integer(Setting.HTTP_PORT, 0, 65_535);
    boolean httpAuthKeys = v.oneOf(Setting.HTTP_AUTH, "keys", "none").equals("keys");
    if (!httpAuthKeys && !HttpAddresses.isLoopback(httpHost)) {
      throw v.bad(
          Setting.HTTP_AUTH,
          "none is allowed only on a loopback http_host (127.0.0.1, ::1, localhost), and"
              + " http_host is "
              + httpHost
              + "; give callers API keys (http_auth=keys) to listen there");
    }
    List<String> allowedHosts = HttpAddresses.allowedHosts(v);
    List<String> allowedOrigins = HttpAddresses.allowedOrigins(v);
    double rateLimitPerSecond = v.decimal(Setting.RATE_LIMIT_PER_SECOND, 0, 1_000_000);
    int rateLimitBurst = v.integer(Setting.RATE_LIMIT_BURST, 1, 1_000_000);
    int httpMaxRequestsPerKey = v.integer(Setting.HTTP_MAX_REQUESTS_PER_KEY, 1, 256);
    int httpMaxLongCallsPerKey = v.integer(Setting.HTTP_MAX_LONG_CALLS_PER_KEY, 1, 256);
    long httpMinDataRate = v.integer(Setting.HTTP_MIN_DATA_RATE, 0, 100_000_000);
    int shutdownGrace = v.integer(Setting.SHUTDOWN_GRACE, 0, 3600);
    String index = v.raw(Setting.INDEX_URL).trim();
    URI indexUrl = index.isEmpty() ? null : v.indexUrl(Setting.INDEX_URL, index);
    List<URI> extra = new ArrayList<>();
    for (String u : v.list(Setting.EXTRA_INDEX_URLS)) {
      extra.add(v.indexUrl(Setting.EXTRA_INDEX_URLS, u));
    }
    Path findLinks = v.directory(Setting.FIND_LINKS);
    List<String> packageHosts = v.lowerCaseList(Setting.PACKAGE_HOSTS);
    int envBuildTimeout = v.integer(Setting.ENV_BUILD_TIMEOUT, 10, 86_400);
    long envMax = v.integer(Setting.ENV_MAX_MB, 1, 1 << 20) * MIB;
    List<String> networkAllow = v.lowerCaseList(Setting.NETWORK_ALLOW);
    boolean networkAllowPrivate = v.bool(Setting.NETWORK_ALLOW_PRIVATE);
    long downloadMax = v.integer(Setting.DOWNLOAD_MAX_MB, 1, 1 << 20) * MIB;
    AgentConfig agent = AgentSettings.read(v, dataDir, envApiKey, warn);
    return new PysandboxConfig(
        resolved,
        List.copyOf(warn),
        dataDir,
        python,
        bwrap,
        backend,
        dockerHost,
        dockerImage,
        dockerRuntime,
        sandboxUser,
        Optional.ofNullable(uidRange),
        diskQuotaFs,
        timeoutDefault,
        timeoutMax,
        outputLimit,
        codeMaxBytes,
        poolSize,
        poolPreload,
        toolsEnabled,
        startupTimeout,
        logLevel,
        maxSessions,
        perTenant == 0 ? maxSessions : Math.min(perTenant, maxSessions),
        perTenant != 0,
        sessionTtl,
        trajectoryRetention,
        sessionRetention,
        keepWorkspaces,
        notebooks,
        approvalPolicy,
        approvalThreshold,
        approvalTtl,
        agentMayApprove,
        httpElicitationApproves,
        cancelGrace,
        uploadMax,
        readMax,
        resultOutputLimit,
        defaultLimits,
        maxLimits,
        outputMax,
        outputsMax,
        collectMaxSeconds,
        collectHashMax,
        keptFilesMax,
        tenantStorageMax,
        seccomp,
        cgroups,
        tiers,
        httpHost,
        httpPort,
        httpAuthKeys,
        allowedHosts,
        allowedOrigins,
        rateLimitPerSecond,
        rateLimitBurst,
        httpMaxRequestsPerKey,
        httpMaxLongCallsPerKey,
        httpMinDataRate,
        shutdownGrace,
        indexUrl,
        List.copyOf(extra),
        findLinks,
        packageHosts,
        envBuildTimeout,
        envMax,
        networkAllow,
        networkAllowPrivate,
        downloadMax,
        agent);
  }

  /** The limits a sandbox gets by default, each clamped to its maximum with a warning. */
  private static Limits defaultLimits(SettingValues v, Limits max, List<String> warn) {
    return new Limits(
        clampToMax(
            warn,
            Setting.MEMORY_LIMIT,
            v.integer(Setting.MEMORY_LIMIT, 64, 1 << 20) * MIB,
            max.memoryBytes(),
            MIB),
        (int)
            clampToMax(
                warn, Setting.PIDS_LIMIT, v.integer(Setting.PIDS_LIMIT, 8, 1 << 22), max.pids(), 1),
        Math.min(v.decimal(Setting.CPU_LIMIT, 0.01, 1024), max.cpus()),
        clampToMax(
            warn,
            Setting.DISK_QUOTA,
            v.integer(Setting.DISK_QUOTA, 1, 1 << 24) * MIB,
            max.diskBytes(),
            MIB),
        max.tmpBytes());
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

  /** The shipped tiers, changed by {@code tiers_file}, with {@code fs_mounts} and the choice. */
  private static TierCatalog tiers(
      SettingValues v,
      Path dataDir,
      Limits defaultLimits,
      Limits maxLimits,
      int timeoutMax,
      List<String> warn) {
    Map<String, Path> mounts;
    try {
      mounts = HostMounts.parse(v.raw(Setting.FS_MOUNTS), dataDir);
    } catch (IllegalArgumentException e) {
      throw v.bad(Setting.FS_MOUNTS, e.getMessage());
    }
    Map<String, Tier> known = TierCatalog.shipped(mounts, defaultLimits, maxLimits);
    String file = v.raw(Setting.TIERS_FILE).trim();
    if (!file.isEmpty()) {
      Path f = ConfigSources.expandHome(file);
      if (!f.isAbsolute()) {
        throw v.bad(Setting.TIERS_FILE, "must be an absolute path");
      }
      if (!Files.isRegularFile(f)) {
        throw v.bad(Setting.TIERS_FILE, "no such file");
      }
      try {
        known = TiersFile.apply(f, known, mounts, maxLimits, timeoutMax, warn);
      } catch (IllegalArgumentException e) {
        throw v.bad(Setting.TIERS_FILE, e.getMessage());
      }
    }
    try {
      return TierCatalog.of(
          known, v.string(Setting.TIER_DEFAULT), v.list(Setting.TIERS_ALLOWED), mounts, warn);
    } catch (TierCatalog.Choice e) {
      throw v.bad(e.setting, e.getMessage());
    }
  }
}
