package dev.pysandbox.http.rest;

import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.agent.AgentEvent;
import dev.pysandbox.api.agent.AgentService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * An agent run's events for an {@link EventStream}: {@link AgentService#watch} calls its sink on
 * the agent run's own thread, which must not wait on a client, so the events are queued there and
 * taken by the stream's drain. The queue holds at most what one agent run emits (two events a step,
 * its steps bounded by its budgets), so a slow client costs memory of that order and never slows
 * the agent.
 *
 * <p>An agent run that is over when the client already has its {@code done} (it resumed after it)
 * gives nothing: the source is then finished at once, and the stream answers 204 as a run's does.
 */
final class AgentEventSource implements EventSource {
  private final String agentRunId;
  private final ConcurrentLinkedQueue<AgentEvent> queue = new ConcurrentLinkedQueue<>();
  private volatile boolean finished;
  private volatile AutoCloseable watch;

  private AgentEventSource(String agentRunId) {
    this.agentRunId = agentRunId;
  }

  /**
   * Follows {@code agentRunId} after the event {@code afterSeq}, telling {@code sink} when there is
   * more.
   *
   * @throws dev.pysandbox.api.PysandboxException not_found for an agent run that is not the
   *     caller's
   */
  static AgentEventSource watch(
      AgentService agents, String agentRunId, long afterSeq, EventSink sink) {
    AgentEventSource s = new AgentEventSource(agentRunId);
    s.watch =
        agents.watch(
            agentRunId,
            afterSeq,
            e -> {
              s.queue.add(e);
              sink.available();
            });
    if (!s.doneQueued() && agents.status(agentRunId, 0).status().finished()) {
      // Over, and its done not given: either the client has it already, or the agent run ended
      // just now and emits it. Its end is awaited past that emit (status waits on the live run's
      // end, which comes after its done event), so a done not queued by then was before afterSeq.
      agents.status(agentRunId, 1);
      if (!s.doneQueued()) {
        s.finished = true;
      }
    }
    return s;
  }

  private boolean doneQueued() {
    return queue.stream().anyMatch(AgentEventSource::isDone);
  }

  private static boolean isDone(AgentEvent e) {
    return "done".equals(e.type());
  }

  @Override
  public String name() {
    return "agent run " + agentRunId;
  }

  @Override
  public List<Event> poll(int maxEvents) {
    List<Event> out = new ArrayList<>();
    while (!finished && out.size() < maxEvents) {
      AgentEvent e = queue.poll();
      if (e == null) {
        break;
      }
      out.add(new Event(e.seq(), e.type(), wire(e)));
      if (isDone(e)) {
        finished = true;
        close();
      }
    }
    return out;
  }

  /** {@code type} and {@code seq} first, then the event's other fields (those it has). */
  static Map<String, Object> wire(AgentEvent e) {
    Map<String, Object> wire = new LinkedHashMap<>();
    wire.put("type", e.type());
    wire.put("seq", e.seq());
    Json.toMap(e).forEach(wire::putIfAbsent);
    return wire;
  }

  @Override
  public boolean finished() {
    return finished;
  }

  @Override
  public void close() {
    AutoCloseable w = watch;
    if (w != null) {
      watch = null;
      try {
        w.close();
      } catch (Exception e) {
        // removing a watcher cannot fail in a way that matters to the stream
      }
    }
    queue.clear();
  }
}
