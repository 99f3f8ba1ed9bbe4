package dev.pysandbox.config;

/**
 * The configuration keys of the sandbox, its faces and its storage, each with its default and what
 * it means; the keys of agent runs are {@link AgentSetting}'s. These two enums are the only place a
 * key is defined: the loader, {@code pysandbox config} and the README's table read both through
 * {@link ConfigSetting#all()}.
 */
public enum Setting implements ConfigSetting {
  DATA_DIR("data_dir", "~/.pysandbox", "Run history (SQLite), run files, workspaces."),
  PYTHON("python", "/usr/bin/python3", "Interpreter run inside the sandbox (absolute path)."),
  BACKEND(
      "backend",
      "auto",
      "Sandbox backend: bwrap, docker (containers through the Docker Engine API: Docker or"
          + " Podman), or auto (bwrap when it works on this host, else docker when its engine"
          + " answers)."),
  BWRAP("bwrap", "/usr/bin/bwrap", "The bubblewrap binary."),
  DOCKER_HOST(
      "docker_host",
      "",
      "The engine the docker backend talks to, a unix:// socket on this host (its containers bind"
          + " host directories); empty: the DOCKER_HOST environment variable, else"
          + " unix:///var/run/docker.sock."),
  DOCKER_IMAGE(
      "docker_image",
      "pysandbox-python:" + dev.pysandbox.api.Version.VALUE,
      "Image of the docker backend's containers: any image with python3 (scripts/build-image.sh"
          + " builds the default from Debian's packages, without a registry)."),
  DOCKER_RUNTIME(
      "docker_runtime",
      "",
      "OCI runtime of the docker backend's containers: empty for the engine's default (runc), or"
          + " one the engine knows, e.g. runsc (gVisor)."),
  SANDBOX_USER(
      "sandbox_user",
      "pysandbox",
      "Host user the sandboxes run as when the server runs as root and sandbox_uid_range is off"
          + " (must not be root)."),
  SANDBOX_UID_RANGE(
      "sandbox_uid_range",
      "2000000000-2000065535",
      "Host uids for sandboxes when the server runs as root, one per live sandbox, so that no"
          + " per-user kernel limit (processes, inotify, ...) is shared; off: all run as"
          + " sandbox_user. Must not overlap a user, group or subordinate id range of the host."),
  TIER_DEFAULT(
      "tier_default",
      "basic",
      "Tier of a run or session that names none (one of tiers_allowed); the warm pool holds"
          + " sandboxes of this tier."),
  TIERS_ALLOWED(
      "tiers_allowed",
      "basic,data_science,filesystem",
      "Tiers a caller may ask for (comma-separated); any other known tier is refused with"
          + " forbidden. Shipped: basic, data_science, filesystem, network."),
  TIERS_FILE(
      "tiers_file",
      "",
      "A JSON file that changes the shipped tiers and adds others (network, mounts, imports,"
          + " limits per tier; see the README's Tiers); empty: the shipped tiers as they are."),
  FS_MOUNTS(
      "fs_mounts",
      "",
      "Host directories tiers may show read-only at /mnt/host/<name>: name=/abs/dir,name2=/other."
          + " Each must exist; its real path is bound, and it may not contain, or lie inside, the"
          + " data directory, /proc, /sys or /dev. The filesystem tier shows them all."),
  INDEX_URL(
      "index_url",
      "https://pypi.org/simple",
      "Package index (PEP 503 simple API, http or https, no credentials in it) environments are"
          + " built from, reached only through the egress proxy; empty: none (find_links only)."),
  EXTRA_INDEX_URLS(
      "extra_index_urls",
      "",
      "More package indexes, comma-separated (as pip's --extra-index-url)."),
  FIND_LINKS(
      "find_links",
      "",
      "A local directory of wheels (a wheelhouse), bound read-only into the build sandbox; with no"
          + " index_url builds use it alone (pip --no-index). One the sandboxes' users cannot read"
          + " is copied for each build (at most env_max_mb)."),
  PACKAGE_HOSTS(
      "package_hosts",
      "files.pythonhosted.org",
      "Hosts, besides the index hosts, an environment build may reach (where the index serves its"
          + " files), comma-separated host patterns."),
  ENV_BUILD_TIMEOUT(
      "env_build_timeout", "600", "Seconds an environment build (venv + pip) may take."),
  ENV_MAX_MB(
      "env_max_mb",
      "2048",
      "Largest package environment, in MiB; a build that grows past it fails."),
  NETWORK_ALLOW(
      "network_allow",
      "",
      "Host patterns code in the network tier (and download_file) may reach through the egress"
          + " proxy: pypi.org,*.example.com,host:8443 (no port: 80 and 443). A session may narrow"
          + " it, never widen it; empty: nothing."),
  NETWORK_ALLOW_PRIVATE(
      "network_allow_private",
      "false",
      "Let the egress proxy reach loopback, private, link-local and metadata addresses (a private"
          + " index on this host, tests); off by default."),
  DOWNLOAD_MAX_MB(
      "download_max_mb",
      "50",
      "Largest file download_file fetches, in MiB (upload_max_bytes and the session's disk"
          + " quota bound it too)."),
  TIMEOUT_DEFAULT("timeout_default", "60", "Seconds a run may take when the call names no limit."),
  TIMEOUT_MAX("timeout_max", "3600", "Largest timeout_seconds a call may ask for."),
  OUTPUT_LIMIT(
      "output_limit", "1048576", "Bytes of stdout and of stderr kept per run (head+tail)."),
  RESULT_OUTPUT_LIMIT(
      "result_output_limit",
      "65536",
      "Bytes of stdout and of stderr a run_python result carries (head+tail, flagged); the"
          + " record keeps output_limit, which get_run returns."),
  CODE_MAX_BYTES("code_max_bytes", "100000", "Largest code accepted, in UTF-8 bytes."),
  POOL_SIZE("pool_size", "2", "Pre-started sandboxes kept ready (0 turns the pool off)."),
  POOL_PRELOAD(
      "pool_preload", "", "Modules pooled sandboxes import before use, e.g. numpy,pandas."),
  MAX_SESSIONS("max_sessions", "10", "Sessions open at once; a new one beyond is refused."),
  MAX_SESSIONS_PER_TENANT(
      "max_sessions_per_tenant",
      "0",
      "Sessions one tenant (one API key's owner) may have open at once; 0: a fair share,"
          + " max_sessions divided among the tenants with API keys on a keyed HTTP face (each"
          + " at least 1), else max_sessions."),
  SESSION_TTL(
      "session_ttl", "30", "Idle minutes before a session is closed (per session: ttl_minutes)."),
  SESSION_RETENTION(
      "session_retention",
      "1440",
      "Minutes a session's end (expired, closed, lost, or a failed creation) is remembered: a call"
          + " naming it meanwhile gets session_expired, session_closed or session_lost instead of a"
          + " new empty session; create_session may take the id again at once. 0: forget at once."),
  TRAJECTORY_RETENTION_DAYS(
      "trajectory_retention_days",
      "30",
      "Days a trajectory file (the calls agents made, under <data_dir>/trajectories/) is kept after"
          + " its last line; 0 keeps them for ever. Swept at start and daily."),
  APPROVAL_POLICY(
      "approval_policy",
      "off",
      "Which runs wait for a person's approval: off (only those that ask, require_approval),"
          + " findings (those whose analysis finds something at or above approval_threshold),"
          + " always (every run)."),
  APPROVAL_THRESHOLD(
      "approval_threshold",
      "high",
      "The least severe finding that makes a run wait: low, medium, high or critical."),
  APPROVAL_TTL(
      "approval_ttl",
      "60",
      "Minutes an approval may wait for a decision; then the run is expired and never runs."),
  AGENT_MAY_APPROVE(
      "agent_may_approve",
      "false",
      "Give agents the MCP tools approve_run and deny_run (weaker: the agent then decides its own"
          + " runs; off by default)."),
  HTTP_ELICITATION_APPROVES(
      "http_elicitation_approves",
      "false",
      "Let MCP clients over HTTP decide held runs at their approval prompt (elicitation). Off by"
          + " default: nothing proves a person answered rather than the agent's own client, so a"
          + " person decides with an approver's key (REST) or on the command line; when on, the decision is"
          + " recorded as `elicitation (client-asserted): <client name>`. Over stdio the person at"
          + " the local client always may."),
  TOOLS_ENABLED(
      "tools_enabled",
      "",
      "MCP tools offered over stdio and HTTP (comma-separated tool names or groups: run,"
          + " approval, session, files, history, env, info, safety, agent); empty: every tool. A smaller"
          + " set makes tools/list smaller; REST and the command line keep every operation."),
  NOTEBOOKS(
      "notebooks",
      "true",
      "Write runs/<id>/notebook.ipynb and notebook.py as each run finishes (in the background);"
          + " false: only when asked for (get_run include_notebook_source, runs open)."),
  KEEP_WORKSPACES(
      "keep_workspaces",
      "false",
      "Keep a closed session's files on disk instead of deleting them."),
  CANCEL_GRACE(
      "cancel_grace", "2", "Seconds cancel_run waits for KeyboardInterrupt before killing."),
  UPLOAD_MAX_BYTES(
      "upload_max_bytes",
      "52428800",
      "Largest file upload_file accepts, on every face (at most 256 MiB); REST uploads stream up"
          + " to it, an MCP message may be 4/3 of it (base64) plus 1 MiB, and a longer one is"
          + " refused with an error."),
  READ_MAX_BYTES(
      "read_max_bytes",
      "16777216",
      "Most bytes read_artifact returns (at most 256 MiB): its max_size_bytes is capped at this,"
          + " and a larger file is refused with artifact_too_large."),
  MEMORY_LIMIT(
      "memory_limit_mb", "512", "Memory of one sandbox (MiB; no swap), enforced by its cgroup."),
  MEMORY_LIMIT_MAX("memory_limit_max_mb", "4096", "Most memory a session may ask for (MiB)."),
  PIDS_LIMIT("pids_limit", "128", "Processes and threads one sandbox may have at once."),
  PIDS_LIMIT_MAX("pids_limit_max", "1024", "Most processes a session may ask for."),
  CPU_LIMIT("cpu_limit", "1", "CPU cores one sandbox may use (a fraction is fine, e.g. 0.5)."),
  CPU_LIMIT_MAX("cpu_limit_max", "8", "Most CPU cores a session may ask for."),
  DISK_QUOTA(
      "disk_quota_mb",
      "1024",
      "Total size of a workspace's files (MiB); a writer past it is stopped."),
  DISK_QUOTA_FS(
      "disk_quota_fs",
      "auto",
      "auto: each workspace is its own file system (an ext4 image of the quota's size, loop-mounted;"
          + " bytes and inodes bounded at all times) where the host allows it (root, loop devices,"
          + " mkfs.ext4); off: the quota is measured while a run is in flight only."),
  DISK_QUOTA_MAX(
      "disk_quota_max_mb", "10240", "Largest workspace quota a session may ask for (MiB)."),
  TMP_SIZE(
      "tmp_size_mb",
      "256",
      "Size of a sandbox's /tmp, and of its /dev/shm (MiB each; memory-backed, and counted"
          + " against memory_mb)."),
  OUTPUT_MAX(
      "output_max_mb",
      "64",
      "Output (stdout and stderr together, MiB) after which a run is interrupted, then killed."),
  OUTPUTS_MAX(
      "outputs_max_mb",
      "8",
      "Most a run's __outputs__ may hold as JSON (MiB); past it the run fails (OutputsRejected,"
          + " naming this setting) and nothing of __outputs__ is kept."),
  COLLECT_MAX_SECONDS(
      "collect_max_seconds",
      "30",
      "Seconds the server spends on a run's files once its code has ended (finding, hashing and"
          + " keeping them); files past it are listed as not kept, with the reason."),
  COLLECT_HASH_MAX(
      "collect_hash_max_mb",
      "4096",
      "Bytes the server hashes per run (MiB) when it collects the run's files (a sparse file"
          + " counts at its apparent size; holes are never read); files past it are listed as not"
          + " kept, with the reason."),
  KEPT_FILES_MAX(
      "kept_files_max_mb",
      "1024",
      "Bytes of changed files kept with one run (MiB of data, holes not counted; at most the"
          + " workspace's disk_quota_mb); files past it are listed as not kept, with the reason."),
  TENANT_STORAGE_MAX(
      "tenant_storage_max_mb",
      "10240",
      "Bytes of files all of one tenant's runs keep together (MiB, the sizes their records list);"
          + " past it a run is still recorded and its files are listed as not kept, with the"
          + " reason (delete or purge runs to free room). 0: no bound."),
  CGROUPS(
      "cgroups",
      "true",
      "Give each sandbox its own cgroup where the host allows (false: rlimits only)."),
  SECCOMP(
      "seccomp",
      "true",
      "Load the seccomp filter (built at start with python3-seccomp; no filter, no sandbox)."),
  STARTUP_TIMEOUT("startup_timeout", "30", "Seconds a new sandbox may take to become ready."),
  LOG_LEVEL("log_level", "info", "Log level (logs go to stderr): error, warn, info, debug."),
  HTTP_HOST(
      "http_host",
      "127.0.0.1",
      "Address serve --http listens on (or --host); any but a loopback address needs"
          + " http_auth=keys."),
  HTTP_PORT(
      "http_port",
      "8765",
      "Port serve --http listens on (or --port); 0 picks a free one, named on stderr at start."),
  HTTP_AUTH(
      "http_auth",
      "keys",
      "keys: every HTTP request but GET /health, /ready and /api/v1/openapi.json needs an API"
          + " key (Authorization: Bearer KEY or X-API-Key: KEY); none: no key is asked and every caller is the tenant"
          + " local (refused unless http_host is a loopback address)."),
  ALLOWED_HOSTS(
      "allowed_hosts",
      "",
      "Host headers the HTTP face answers (host or host:port, comma-separated; a host alone"
          + " allows any port); empty: the bound host:port, localhost:port and 127.0.0.1:port."
          + " Others get 403 (DNS rebinding)."),
  ALLOWED_ORIGINS(
      "allowed_origins",
      "",
      "Browser origins (scheme://host[:port], comma-separated) that may call the HTTP face, with"
          + " CORS headers; empty: same origin only. A request with any other Origin gets 403."),
  RATE_LIMIT_PER_SECOND(
      "rate_limit_per_second",
      "100",
      "HTTP requests per second one API key may make, sustained, and one client address without"
          + " a valid key (every caller with http_auth=none); 0: no limit. Past it 429"
          + " rate_limited with Retry-After."),
  RATE_LIMIT_BURST(
      "rate_limit_burst",
      "1000",
      "HTTP requests one API key (or one client address without a valid key) may make at once"
          + " before rate_limit_per_second applies."),
  HTTP_MAX_REQUESTS_PER_KEY(
      "http_max_requests_per_key",
      "32",
      "HTTP requests one API key (or one client address without a valid key) may have in flight"
          + " at once (REST event streams included, MCP GET streams not); past it 429"
          + " rate_limited with Retry-After, so that one caller cannot hold every server thread."),
  HTTP_MAX_LONG_CALLS_PER_KEY(
      "http_max_long_calls_per_key",
      "8",
      "Of those, long calls: get_run with wait_seconds, download_file (fetching a URL or"
          + " sending a file) and upload_file, over REST or MCP; past it 429 rate_limited"
          + " with Retry-After."),
  HTTP_MIN_DATA_RATE(
      "http_min_data_rate",
      "1024",
      "Bytes per second below which a request body, an answer the client does not take, or a"
          + " download_file origin is cut off (after 10 s of grace); 0: no minimum (the 30 s"
          + " idle timeout still applies)."),
  SHUTDOWN_GRACE(
      "shutdown_grace",
      "10",
      "Seconds HTTP requests in flight may take to finish after a stop signal; runs still going"
          + " then end cancelled, with the reason.");

  private final String key;
  private final String defaultValue;
  private final String doc;

  Setting(String key, String defaultValue, String doc) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.doc = doc;
  }

  @Override
  public String key() {
    return key;
  }

  @Override
  public String defaultValue() {
    return defaultValue;
  }

  @Override
  public String doc() {
    return doc;
  }

  /**
   * The constant of this enum with this key, or {@code null} ({@link ConfigSetting#byKey}: any).
   */
  public static Setting byKey(String key) {
    for (Setting s : values()) {
      if (s.key.equals(key)) {
        return s;
      }
    }
    return null;
  }
}
