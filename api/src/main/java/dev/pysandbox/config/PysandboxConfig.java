package dev.pysandbox.config;

import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The one configuration object: resolved from CLI flags, then {@code PYSANDBOX_*} environment
 * variables, then a properties file, then built-in defaults ({@link ConfigSources}); validated when
 * built by {@link ConfigReader} (impossible values are rejected with the setting's name, risky ones
 * clamped with a warning); immutable. Build it with {@link #load} or {@link #defaults()}: the
 * canonical constructor checks nothing and is {@link ConfigReader}'s.
 *
 * <p>A record so that its many values are declared once, each documented here, with no field and
 * getter written out for each; the code that reads them lives in {@link ConfigReader}, {@link
 * SettingValues} and {@link HttpAddresses}.
 *
 * @param resolved every setting's raw value and where it came from
 * @param warnings values that were clamped while building, one sentence each
 * @param dataDir {@code data_dir}, absolute
 * @param python the interpreter sandboxes run, absolute
 * @param bwrap the bubblewrap executable, absolute
 * @param backend {@code auto}, {@code bwrap} or {@code docker}
 * @param dockerHost the docker backend's engine: a {@code unix://} URI
 * @param dockerImage the docker backend's image
 * @param dockerRuntime the docker backend's OCI runtime, or empty for the engine's default
 * @param sandboxUser the user sandboxes run as (never root)
 * @param sandboxUidRange host uids for sandboxes when the server runs as root, one per live
 *     sandbox; empty when every sandbox runs as {@code sandboxUser}
 * @param diskQuotaFs whether each workspace gets a file system of its own where the host allows it
 * @param timeoutDefaultSeconds a run's timeout unless it asks for another (at most the maximum)
 * @param timeoutMaxSeconds the longest timeout a run may ask for
 * @param outputLimitBytes bytes of stdout and of stderr kept per run (head and tail)
 * @param codeMaxBytes the largest code accepted, in UTF-8 bytes
 * @param poolSize sandboxes kept started ahead of need (at most 64)
 * @param poolPreload modules the pool's sandboxes import before they are handed out
 * @param toolsEnabled the MCP tools to offer ({@code tools_enabled} resolved): every tool's name
 *     when unset
 * @param startupTimeoutSeconds how long a sandbox may take to become ready
 * @param logLevel {@code error} … {@code trace}
 * @param maxSessions sessions open at once; a new one beyond is refused
 * @param maxSessionsPerTenant sessions one tenant may have open at once (at most {@code
 *     maxSessions})
 * @param maxSessionsPerTenantSet whether {@code max_sessions_per_tenant} was set (not 0): else a
 *     server shared by several tenants gives each a fair share of {@code max_sessions}
 * @param sessionTtlMinutes idle minutes before a session is closed (unless it asks for another)
 * @param trajectoryRetentionDays days a trajectory file is kept after its last line; 0 for ever
 * @param sessionRetentionMinutes minutes a session's end is remembered (0: not at all)
 * @param keepWorkspaces whether a closed session's files stay on disk
 * @param notebooks whether every finished run's notebooks are written as it finishes
 * @param approvalPolicy {@code off}, {@code findings} or {@code always}: which runs wait for
 *     approval
 * @param approvalThreshold the least severe finding that makes a run wait ({@code low} … {@code
 *     critical})
 * @param approvalTtlMinutes minutes an approval may wait before its run expires
 * @param agentMayApprove whether agents get the approve_run and deny_run tools
 * @param httpElicitationApproves whether an MCP client over HTTP may decide a held run at its
 *     elicitation prompt (its answer is recorded as client-asserted); over stdio the local client
 *     always may
 * @param cancelGraceSeconds seconds cancel_run waits for KeyboardInterrupt before killing
 * @param uploadMaxBytes largest upload in bytes (decoded)
 * @param readMaxBytes most bytes one read_artifact returns (and holds in memory); its
 *     max_size_bytes is capped
 * @param resultOutputLimitBytes bytes of stdout and of stderr a run_python tool result carries
 * @param defaultLimits the limits a sandbox gets unless a session asks for others
 * @param maxLimits the most a session may ask for
 * @param outputMaxBytes a run whose stdout or stderr passes this many bytes is killed
 * @param outputsMaxBytes most bytes of JSON a run's {@code __outputs__} may hold ({@code
 *     outputs_max_mb})
 * @param collectMaxSeconds seconds spent on a run's files once its code has ended ({@code
 *     collect_max_seconds})
 * @param collectHashMaxBytes bytes hashed per run when its files are collected ({@code
 *     collect_hash_max_mb})
 * @param keptFilesMaxBytes bytes of data kept with one run at most ({@code kept_files_max_mb}); 0
 *     keeps none
 * @param tenantStorageMaxBytes bytes of files all of a tenant's runs keep together ({@code
 *     tenant_storage_max_mb}); 0: any
 * @param seccomp whether sandboxes get the seccomp filter
 * @param cgroups whether each sandbox gets its own cgroup where the host allows one
 * @param tiers the tiers: every one known, the default, those callers may ask for, the host
 *     directories
 * @param httpHost the address the HTTP face listens on
 * @param httpPort the port the HTTP face listens on; 0 for one the system picks
 * @param httpAuthKeys true when every HTTP request but the health checks needs an API key; false
 *     ({@code http_auth=none}, loopback only) when every caller is the tenant {@code local}
 * @param allowedHosts Host headers the HTTP face answers, lower case, each {@code host} (any port)
 *     or {@code host:port}; empty for the defaults (the bound address, localhost and 127.0.0.1 on
 *     its port)
 * @param allowedOrigins origins ({@code scheme://host[:port]}, lower case) allowed besides the same
 *     origin
 * @param rateLimitPerSecond sustained HTTP requests per second per API key; 0 for no limit
 * @param rateLimitBurst HTTP requests one API key may make at once
 * @param httpMaxRequestsPerKey HTTP requests one API key (or address without a valid key) may have
 *     in flight
 * @param httpMaxLongCallsPerKey of those, waits, downloads and uploads
 * @param httpMinDataRate bytes per second under which a slow body, reader or origin is cut off; 0
 *     for none
 * @param shutdownGraceSeconds seconds requests in flight may take to finish once the server is told
 *     to stop
 * @param indexUrl {@code index_url}, or {@code null} for none
 * @param extraIndexUrls {@code extra_index_urls}
 * @param findLinks {@code find_links}: a real directory path, or {@code null}
 * @param packageHosts {@code package_hosts}
 * @param envBuildTimeoutSeconds seconds an environment build (venv + pip) may take
 * @param envMaxBytes the largest package environment; a build that grows past it fails
 * @param networkAllow {@code network_allow}: host patterns, lower-cased (checked by the egress
 *     policy)
 * @param networkAllowPrivate whether the egress proxy may reach loopback, private, link-local and
 *     metadata addresses
 * @param agent the settings of agent runs (issue 26)
 * @param downloadMaxBytes the largest file download_file fetches
 */
public record PysandboxConfig(
    Map<ConfigSetting, Resolved> resolved,
    List<String> warnings,
    Path dataDir,
    Path python,
    Path bwrap,
    String backend,
    String dockerHost,
    String dockerImage,
    String dockerRuntime,
    String sandboxUser,
    Optional<UidRange> sandboxUidRange,
    boolean diskQuotaFs,
    int timeoutDefaultSeconds,
    int timeoutMaxSeconds,
    int outputLimitBytes,
    int codeMaxBytes,
    int poolSize,
    List<String> poolPreload,
    Set<String> toolsEnabled,
    int startupTimeoutSeconds,
    String logLevel,
    int maxSessions,
    int maxSessionsPerTenant,
    boolean maxSessionsPerTenantSet,
    int sessionTtlMinutes,
    int trajectoryRetentionDays,
    int sessionRetentionMinutes,
    boolean keepWorkspaces,
    boolean notebooks,
    String approvalPolicy,
    String approvalThreshold,
    int approvalTtlMinutes,
    boolean agentMayApprove,
    boolean httpElicitationApproves,
    int cancelGraceSeconds,
    int uploadMaxBytes,
    int readMaxBytes,
    int resultOutputLimitBytes,
    Limits defaultLimits,
    Limits maxLimits,
    long outputMaxBytes,
    long outputsMaxBytes,
    int collectMaxSeconds,
    long collectHashMaxBytes,
    long keptFilesMaxBytes,
    long tenantStorageMaxBytes,
    boolean seccomp,
    boolean cgroups,
    TierCatalog tiers,
    String httpHost,
    int httpPort,
    boolean httpAuthKeys,
    List<String> allowedHosts,
    List<String> allowedOrigins,
    double rateLimitPerSecond,
    int rateLimitBurst,
    int httpMaxRequestsPerKey,
    int httpMaxLongCallsPerKey,
    long httpMinDataRate,
    int shutdownGraceSeconds,
    URI indexUrl,
    List<URI> extraIndexUrls,
    Path findLinks,
    List<String> packageHosts,
    int envBuildTimeoutSeconds,
    long envMaxBytes,
    List<String> networkAllow,
    boolean networkAllowPrivate,
    long downloadMaxBytes,
    AgentConfig agent) {

  /** Where one value came from, for {@code check_setup} and {@code pysandbox config}. */
  public record Resolved(ConfigSetting setting, String value, String source) {}

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
    return ConfigReader.read(
        ConfigSources.resolve(flags, env, configFile), env.get(ConfigSources.API_KEY_ENV));
  }

  /**
   * Every setting ({@link ConfigSetting#all()}) with its value and source, in definition order. The
   * agent provider's API key is no setting and is not here: {@link AgentConfig#apiKeyStatus()} says
   * whether it is set.
   */
  public Map<String, Resolved> describe() {
    Map<String, Resolved> out = new LinkedHashMap<>();
    for (ConfigSetting s : ConfigSetting.all()) {
      out.put(s.key(), resolved.get(s));
    }
    return out;
  }

  /** Whether an engine URI is a Unix socket on this host (what the docker backend can use). */
  public static boolean localEngine(String uri) {
    return uri.startsWith("unix:///")
        && uri.length() <= 8 + 107
        && !uri.contains("..")
        && uri.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
  }
}
