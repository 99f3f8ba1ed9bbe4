package dev.pysandbox.mcp;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.util.DaemonThreads;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerTransportProviderBase;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.scheduler.Schedulers;

/**
 * {@code resources/subscribe} on a run: the MCP sessions that wait for a run to end, and one thread
 * that checks those runs every {@link #POLL_MILLIS} ms ({@code getRun} on the subscriber's tenant's
 * service: a running run's record is a small row) and sends {@code notifications/resources/updated}
 * to each subscriber when its run has ended. A run that has already ended when it is subscribed to
 * is notified at the next check; a run that disappears is notified too (reading it then says so).
 *
 * <p>Nothing outlives the run: a run is forgotten once it has been notified, whether its
 * subscribers are still there or not, so a client that subscribes and vanishes leaves nothing
 * behind once its runs end. The state is bounded besides: {@link #MAX_RUNS} runs watched at once,
 * {@link #MAX_PER_SESSION} by one MCP session; a closed MCP session's subscriptions go at once.
 * Only a run of the caller's tenant can be subscribed to: another tenant's is answered exactly as
 * one that does not exist.
 *
 * <p>The core is polled rather than hooked so that a run started by any face, or by another server
 * sharing the data directory, is seen to end alike.
 */
final class RunSubscriptions implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RunSubscriptions.class);

  static final long POLL_MILLIS = 250;

  /** Runs watched at once, every client together. */
  static final int MAX_RUNS = 1_000;

  /** Runs one MCP session may watch at once. */
  static final int MAX_PER_SESSION = 100;

  /** JSON-RPC's range for server errors: a subscription refused for want of room. */
  static final int TOO_MANY = RunResources.SERVER_ERROR;

  private final McpServerTransportProviderBase transport;
  private final ScheduledExecutorService timer;
  private final int maxRuns;
  private final int maxPerSession;

  /** By run URI; guarded by {@code this}. */
  private final Map<String, Watch> watched = new HashMap<>();

  /** One run and the MCP sessions waiting for it to end; all of one tenant. */
  private static final class Watch {
    final SandboxService service;
    final String runId;
    final Set<String> sessions = new LinkedHashSet<>();

    Watch(SandboxService service, String runId) {
      this.service = service;
      this.runId = runId;
    }
  }

  /**
   * @param transport sends a notification to one MCP session
   */
  RunSubscriptions(McpServerTransportProviderBase transport) {
    this(transport, POLL_MILLIS, MAX_RUNS, MAX_PER_SESSION);
  }

  /** With other bounds and another pace (tests). */
  RunSubscriptions(
      McpServerTransportProviderBase transport, long pollMillis, int maxRuns, int maxPerSession) {
    this.transport = transport;
    this.maxRuns = maxRuns;
    this.maxPerSession = maxPerSession;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("pysandbox-run-subscriptions"));
    timer.scheduleWithFixedDelay(this::pollSafely, pollMillis, pollMillis, TimeUnit.MILLISECONDS);
  }

  /**
   * Subscribes an MCP session to a run's record.
   *
   * @param service the caller's tenant's service
   * @throws McpError the error to answer: {@code -32002} for a URI that is not a run of the
   *     caller's tenant, {@code -32602} for a file or image URI, {@link #TOO_MANY} past the bounds
   */
  void subscribe(SandboxService service, String mcpSessionId, String uri) {
    ResourceUri parsed;
    try {
      parsed = ResourceUri.parse(uri);
    } catch (ResourceUri.BadPath e) {
      parsed = null;
    }
    if (parsed == null) {
      throw RunResources.notFound(
          "no such resource: " + uri + " (a run, pysandbox://runs/{run_id}, can be subscribed to)");
    }
    if (parsed.kind() != ResourceUri.Kind.RUN) {
      throw RunResources.invalidParams(
          "only a run's record (pysandbox://runs/{run_id}) can be subscribed to: it changes"
              + " once, when the run ends; a run's files and images never change, and a"
              + " session's files are not watched");
    }
    try {
      service.getRun(parsed.runId(), false);
    } catch (PysandboxException e) {
      throw RunResources.error(e);
    }
    synchronized (this) {
      Watch w = watched.get(uri);
      if (w != null && w.sessions.contains(mcpSessionId)) {
        return;
      }
      long mine = watched.values().stream().filter(x -> x.sessions.contains(mcpSessionId)).count();
      if (mine >= maxPerSession) {
        throw tooMany("this MCP session already waits for " + mine + " runs");
      }
      if (w == null) {
        if (watched.size() >= maxRuns) {
          throw tooMany("the server already watches " + watched.size() + " runs");
        }
        w = new Watch(service, parsed.runId());
        watched.put(uri, w);
      }
      w.sessions.add(mcpSessionId);
    }
  }

  private McpError tooMany(String why) {
    return McpError.builder(TOO_MANY)
        .message(
            "too many subscriptions: "
                + why
                + " (at most "
                + maxPerSession
                + " a session, "
                + maxRuns
                + " in all); unsubscribe from some, or poll get_run")
        .data(Map.of("code", ErrorCode.RATE_LIMITED.wireName(), "retryable", true))
        .build();
  }

  /** Unsubscribes; a URI the session does not wait for is not an error. */
  synchronized void unsubscribe(String mcpSessionId, String uri) {
    Watch w = watched.get(uri);
    if (w != null && w.sessions.remove(mcpSessionId) && w.sessions.isEmpty()) {
      watched.remove(uri);
    }
  }

  /** The MCP session ended: its subscriptions go. */
  synchronized void sessionClosed(String mcpSessionId) {
    watched.values().removeIf(w -> w.sessions.remove(mcpSessionId) && w.sessions.isEmpty());
  }

  /** Runs watched now (for tests and the log). */
  synchronized int size() {
    return watched.size();
  }

  @Override
  public void close() {
    timer.shutdownNow();
    synchronized (this) {
      watched.clear();
    }
  }

  private void pollSafely() {
    try {
      poll();
    } catch (RuntimeException e) {
      log.warn("checking subscribed runs failed: {}", e.toString());
    }
  }

  private void poll() {
    List<Map.Entry<String, Watch>> now;
    synchronized (this) {
      if (watched.isEmpty()) {
        return;
      }
      now = new ArrayList<>(watched.entrySet());
    }
    for (Map.Entry<String, Watch> e : now) {
      if (ended(e.getValue())) {
        List<String> sessions;
        synchronized (this) {
          if (watched.get(e.getKey()) != e.getValue()) {
            continue;
          }
          watched.remove(e.getKey());
          sessions = List.copyOf(e.getValue().sessions);
        }
        sessions.forEach(s -> notifyUpdated(s, e.getKey()));
      }
    }
  }

  private static boolean ended(Watch w) {
    try {
      RunRecord r = w.service.getRun(w.runId, false);
      return r.status().isFinal();
    } catch (PysandboxException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return true;
      }
      log.debug("checking run {} failed (tried again shortly): {}", w.runId, e.getMessage());
      return false;
    }
  }

  /** Sent off this thread: a client that does not read its stream must not hold the others up. */
  private void notifyUpdated(String mcpSessionId, String uri) {
    transport
        .notifyClient(
            mcpSessionId,
            McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED,
            new McpSchema.ResourcesUpdatedNotification(uri))
        .subscribeOn(Schedulers.boundedElastic())
        .subscribe(
            null,
            err ->
                log.debug(
                    "could not tell MCP session {} that {} changed: {}",
                    mcpSessionId,
                    uri,
                    err.toString()));
  }
}
