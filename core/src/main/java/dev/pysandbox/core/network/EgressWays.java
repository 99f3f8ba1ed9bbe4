package dev.pysandbox.core.network;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.audit.SecurityEventLog;
import dev.pysandbox.egress.EgressAttempt;
import dev.pysandbox.egress.EgressGate;
import dev.pysandbox.egress.EgressListener;
import dev.pysandbox.egress.EgressPolicy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The server's side of every way out of a sandbox: one egress proxy (started on first use), the
 * policies it applies — the index hosts for environment builds, {@code network_allow} for the
 * network tier and {@code download_file} — and the security event each attempt becomes.
 */
public final class EgressWays implements AutoCloseable {
  /** Where doors' sockets lie: short (a socket path has at most 107 bytes), one per server. */
  static final Path SOCKET_ROOT = Path.of("/run/pysandbox/egress");

  private final PysandboxConfig config;
  private final SecurityEventLog events;
  private final Path socketDir;
  private final EgressPolicy network;
  private final Function<Path, EgressGate> gates;
  private EgressGate proxy;
  private boolean closed;

  /**
   * @param gates makes the egress proxy serving doors under a directory (on first use)
   * @throws PysandboxException {@code invalid_argument} naming the setting when {@code
   *     network_allow} or {@code package_hosts} holds a pattern the policy refuses
   */
  public EgressWays(
      PysandboxConfig config,
      SecurityEventLog events,
      String instanceId,
      Function<Path, EgressGate> gates) {
    this.config = config;
    this.gates = gates;
    this.events = events;
    this.socketDir = SOCKET_ROOT.resolve(instanceId);
    this.network = policy("network_allow", config.networkAllow());
    buildPolicy(); // checks package_hosts and the index hosts now, not at the first build
  }

  private EgressPolicy policy(String setting, List<String> patterns) {
    try {
      return EgressPolicy.of(patterns, config.networkAllowPrivate());
    } catch (IllegalArgumentException e) {
      throw PysandboxException.invalid("setting " + setting + " is invalid: " + e.getMessage());
    }
  }

  /** The hosts of the index URLs, then {@code package_hosts}. */
  private EgressPolicy buildPolicy() {
    Set<String> hosts = new LinkedHashSet<>();
    List<URI> indexes = new ArrayList<>();
    if (config.indexUrl() != null) {
      indexes.add(config.indexUrl());
    }
    indexes.addAll(config.extraIndexUrls());
    for (URI u : indexes) {
      hosts.add(u.getPort() < 0 ? u.getHost() : u.getHost() + ":" + u.getPort());
    }
    hosts.addAll(config.packageHosts());
    return policy("index_url / package_hosts", List.copyOf(hosts));
  }

  /** {@code network_allow}, as the server has it. */
  EgressPolicy networkPolicy() {
    return network;
  }

  private synchronized EgressGate proxy() {
    if (closed) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "the server is stopping: no new way out");
    }
    if (proxy == null) {
      EgressGate p = gates.apply(socketDir);
      p.start();
      proxy = p;
    }
    return proxy;
  }

  /** The way out of an environment build: the index hosts only. */
  public SandboxSpec.Egress forBuild(String tenant) {
    EgressPolicy policy = buildPolicy();
    return way(policy, listener(tenant, null, () -> null, "environment_build"));
  }

  /**
   * The way out of a network-tier sandbox: {@code network_allow}, or the narrower policy a session
   * asked for.
   *
   * @param runId the run the sandbox runs when an attempt ends (for its security event), or null
   */
  public SandboxSpec.Egress forSession(
      String tenant,
      String sessionId,
      EgressPolicy narrowed,
      java.util.function.Supplier<String> runId) {
    return way(
        narrowed == null ? network : narrowed, listener(tenant, sessionId, runId, "network_tier"));
  }

  /**
   * {@code network_allow} narrowed to these patterns.
   *
   * @throws PysandboxException {@code invalid_argument} naming a pattern that is malformed or that
   *     no pattern of the server's covers
   */
  public EgressPolicy narrow(List<String> patterns) {
    try {
      return network.narrow(patterns);
    } catch (IllegalArgumentException e) {
      throw PysandboxException.invalid("network_allow: " + e.getMessage());
    }
  }

  private SandboxSpec.Egress way(EgressPolicy policy, EgressListener listener) {
    return sandboxId -> {
      EgressGate.Door door = proxy().open(sandboxId, policy, listener);
      return new SandboxSpec.Egress.Door() {
        @Override
        public Path socket() {
          return door.socket();
        }

        @Override
        public void close() {
          door.close();
        }
      };
    };
  }

  /** How long a download_file origin may be slow before its pace is measured. */
  static final Duration ORIGIN_GRACE = Duration.ofSeconds(10);

  /**
   * Fetches {@code url} through {@code network_allow} into {@code out}, cut off when the origin
   * sends slower than {@code http_min_data_rate} (it holds the caller's thread meanwhile).
   *
   * @throws PysandboxException {@code forbidden} when the policy refuses it, saying why
   */
  public EgressGate.Download download(
      URI url, long maxBytes, OutputStream out, String tenant, String sessionId)
      throws IOException {
    try {
      return proxy()
          .download(
              url,
              network,
              maxBytes,
              Duration.ofSeconds(Math.max(30, config.timeoutMaxSeconds())),
              new EgressGate.MinimumRate(config.httpMinDataRate(), ORIGIN_GRACE),
              out,
              listener(tenant, sessionId, () -> null, "download_file"));
    } catch (EgressGate.EgressRefused e) {
      throw new PysandboxException(
          ErrorCode.FORBIDDEN, "refused by pysandbox's network policy: " + e.reason());
    }
  }

  private EgressListener listener(
      String tenant, String sessionId, java.util.function.Supplier<String> runId, String via) {
    return (EgressAttempt a) -> {
      Map<String, Object> detail = new LinkedHashMap<>();
      detail.put("via", via);
      detail.put("method", a.method());
      detail.put("host", a.host());
      detail.put("port", a.port());
      detail.put("address", a.address());
      detail.put("reason", a.reason());
      detail.put("bytes_out", a.bytesOut());
      detail.put("bytes_in", a.bytesIn());
      events.record(
          tenant,
          a.allowed() ? SecurityEvent.Kind.NETWORK_ALLOWED : SecurityEvent.Kind.NETWORK_DENIED,
          sessionId,
          runId.get(),
          detail);
    };
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (proxy != null) {
      proxy.close();
      proxy = null;
      try {
        java.nio.file.Files.deleteIfExists(socketDir); // empty once every door is closed
      } catch (IOException e) {
        // a door's socket is still there: the next start-up's directory is another one
      }
    }
  }
}
