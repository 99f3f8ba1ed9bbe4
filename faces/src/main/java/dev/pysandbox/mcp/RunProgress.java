package dev.pysandbox.mcp;

import dev.pysandbox.api.Approval;
import dev.pysandbox.api.ApprovalDecision;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.ShownText;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an MCP tool call hears of the run it started: the client's cancel stops the run, and a call
 * that came with a {@code progressToken} gets {@code notifications/progress} once a second while
 * the run goes on ({@code progress} = seconds elapsed, {@code message} = the latest line of output,
 * cut to 200 characters). One timer thread serves every call; a notification that cannot be sent is
 * dropped (the run never waits for a client).
 */
final class RunProgress implements RunListener, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RunProgress.class);
  static final int MESSAGE_MAX_CHARS = 200;
  static final int MAX_LOG_LINES_PER_SECOND = 100;
  static final int LOG_LINE_MAX_CHARS = 4096;

  /** How a decision at a stdio client's prompt is recorded: the local person's. */
  static final String LOCAL_DECIDER = "elicitation:";

  /**
   * How a decision at an HTTP client's prompt is recorded, where the operator lets it decide: the
   * client says a person answered, and the name is the one the client gave.
   */
  static final String CLIENT_ASSERTED_DECIDER = "elicitation (client-asserted): ";

  private static final ScheduledExecutorService TICKS =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("pysandbox-mcp-progress"));

  private final SandboxService service;
  private final CallHandle call;
  private final McpSyncServerExchange exchange;
  private final Object token;
  private final long startedNanos = System.nanoTime();
  private final boolean logLines;
  private final String elicitationDecider;
  private volatile String lastLine;
  private long windowStart;
  private int sentInWindow;
  private long droppedLines;
  private ScheduledFuture<?> ticker;
  private boolean closed;

  /**
   * @param call the request in flight, or {@code null}
   * @param request the tool call; its {@code _meta.progressToken}, if any, asks for progress
   * @param elicitationDecider how a decision at the client's prompt is recorded ({@link
   *     #LOCAL_DECIDER}, {@link #CLIENT_ASSERTED_DECIDER}), or {@code null}: this client is not
   *     asked, and a held run waits for an approver's key (REST) or the command line
   */
  RunProgress(
      SandboxService service,
      CallHandle call,
      McpSyncServerExchange exchange,
      McpSchema.CallToolRequest request,
      boolean logLines,
      String elicitationDecider) {
    this.logLines = logLines && exchange != null;
    this.elicitationDecider = elicitationDecider;
    this.service = service;
    this.call = call;
    this.exchange = exchange;
    this.token =
        request == null || request.meta() == null ? null : request.meta().get("progressToken");
  }

  /** The client's own model through sampling, when it declared the capability (agent runs). */
  @Override
  public dev.pysandbox.api.agent.ModelClient clientModel() {
    return SamplingModel.of(exchange);
  }

  /**
   * Asks the person at the client, when the client declares elicitation and this face lets its
   * clients decide (stdio always; HTTP only with {@code http_elicitation_approves}, since an
   * agent's own client can answer its prompt): the full code, why it waits and every finding;
   * accept approves, decline or cancel denies. Otherwise, or when the prompt fails (the client
   * times out), nothing is decided here.
   */
  @Override
  public ApprovalDecision askApproval(Approval approval) {
    if (exchange == null || elicitationDecider == null) {
      return null;
    }
    McpSchema.ClientCapabilities caps = exchange.getClientCapabilities();
    if (caps == null || caps.elicitation() == null) {
      return null;
    }
    McpSchema.ElicitResult r =
        exchange.createElicitation(
            McpSchema.ElicitFormRequest.builder(
                    promptOf(approval),
                    Map.of(
                        "type",
                        "object",
                        "properties",
                        Map.of(
                            "reason",
                            Map.of(
                                "type",
                                "string",
                                "title",
                                "Reason",
                                "description",
                                "Why you approve or deny it (kept with the decision)"))))
                .build());
    String client = elicitationDecider + clientName(exchange.getClientInfo());
    Object reason = r.content() == null ? null : r.content().get("reason");
    String why = reason instanceof String text && !text.isBlank() ? text : null;
    return switch (r.action()) {
      case ACCEPT -> new ApprovalDecision(true, client, why);
      case DECLINE -> new ApprovalDecision(false, client, why);
      case CANCEL ->
          new ApprovalDecision(false, client, why == null ? "cancelled at the prompt" : why);
    };
  }

  /** The name the client gave itself, as a record may show it: printable, at most 100 chars. */
  static String clientName(McpSchema.Implementation info) {
    String name = info == null || info.name() == null ? "" : info.name();
    name =
        name.codePoints()
            .filter(c -> !Character.isISOControl(c) && !ShownText.invisible(c))
            .limit(100)
            .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
            .toString()
            .strip();
    return name.isEmpty() ? "client" : name;
  }

  /**
   * What the person is shown: why the run waits, each finding, and the whole code, with control and
   * invisible format characters escaped ({@link ShownText}): a bidirectional override in the code
   * would otherwise make the person read other code than what runs (issue 24 item 13).
   */
  static String promptOf(Approval a) {
    return ShownText.escape(promptText(a));
  }

  private static String promptText(Approval a) {
    StringBuilder text =
        new StringBuilder()
            .append("pysandbox: run ")
            .append(a.runId())
            .append(" waits for your approval (")
            .append(a.approvalId())
            .append(", until ")
            .append(a.expiresAt())
            .append(").\nWhy: ")
            .append(a.why())
            .append('\n');
    if (!a.riskFindings().isEmpty()) {
      text.append("\nFindings:\n");
      for (var f : a.riskFindings()) {
        text.append("- ")
            .append(f.severity())
            .append(' ')
            .append(f.rule())
            .append(f.line() == null ? "" : " at line " + f.line())
            .append(": ")
            .append(f.message())
            .append('\n');
      }
    }
    text.append("\nCode:\n").append(a.code() == null ? "(not available)" : a.code());
    text.append("\n\nAccept to run it; decline to deny it (it then never runs).");
    return text.toString();
  }

  @Override
  public void started(String runId) {
    if (call != null) {
      call.whenCancelled(() -> cancelQuietly(runId));
    }
    startTicking();
  }

  private void startTicking() {
    if (token != null && exchange != null) {
      synchronized (this) {
        if (!closed && ticker == null) {
          ticker = TICKS.scheduleAtFixedRate(this::tick, 1, 1, TimeUnit.SECONDS);
        }
      }
    }
  }

  /**
   * A line of the environment build before the run: the progress notifications start now and carry
   * it as their message, and, with log lines asked for, it is a {@code notifications/message} of
   * logger {@code environment}.
   */
  @Override
  public void preparing(String line) {
    String l = lastLineOf(line);
    if (l != null) {
      lastLine = l;
    }
    startTicking();
    if (logLines) {
      log("environment", McpSchema.LoggingLevel.INFO, line);
    }
  }

  @Override
  public boolean wantsEvents() {
    return token != null || logLines;
  }

  @Override
  public void event(RunEvent event) {
    String text =
        event instanceof RunEvent.Stdout out
            ? out.text()
            : event instanceof RunEvent.Stderr err ? err.text() : null;
    if (text == null) {
      if (event.isDone()) {
        close();
      }
      return;
    }
    String line = lastLineOf(text);
    if (line != null) {
      lastLine = line;
    }
    if (logLines) {
      log(event instanceof RunEvent.Stdout, text);
    }
  }

  /**
   * The output as {@code notifications/message} (logger {@code stdout} at info, {@code stderr} at
   * warning), one per line, at most {@link #MAX_LOG_LINES_PER_SECOND} a second: past that, lines
   * are dropped and the next message says how many.
   */
  private void log(boolean stdout, String text) {
    log(
        stdout ? "stdout" : "stderr",
        stdout ? McpSchema.LoggingLevel.INFO : McpSchema.LoggingLevel.WARNING,
        text);
  }

  private synchronized void log(String logger, McpSchema.LoggingLevel level, String text) {
    long now = System.nanoTime();
    if (now - windowStart > 1_000_000_000L) {
      windowStart = now;
      sentInWindow = 0;
    }
    for (String line : text.split("\r?\n|\r")) {
      if (line.isEmpty()) {
        continue;
      }
      if (sentInWindow >= MAX_LOG_LINES_PER_SECOND) {
        droppedLines++;
        continue;
      }
      String data =
          line.length() <= LOG_LINE_MAX_CHARS ? line : line.substring(0, LOG_LINE_MAX_CHARS);
      if (droppedLines > 0) {
        data = "[" + droppedLines + " lines not sent] " + data;
        droppedLines = 0;
      }
      sentInWindow++;
      String sent = data;
      send(
          "log",
          () ->
              exchange.loggingNotification(
                  McpSchema.LoggingMessageNotification.builder(level, sent)
                      .logger(logger)
                      .build()));
    }
  }

  /** The last non-blank line of a chunk of output, cut to {@link #MESSAGE_MAX_CHARS}. */
  static String lastLineOf(String text) {
    String[] lines = text.split("\r?\n|\r");
    for (int i = lines.length - 1; i >= 0; i--) {
      String l = lines[i].strip();
      if (!l.isEmpty()) {
        return l.length() <= MESSAGE_MAX_CHARS ? l : l.substring(0, MESSAGE_MAX_CHARS);
      }
    }
    return null;
  }

  private void tick() {
    double seconds = Math.floor((System.nanoTime() - startedNanos) / 1e9);
    send(
        "progress",
        () ->
            exchange.progressNotification(
                McpSchema.ProgressNotification.builder(token, seconds).message(lastLine).build()));
  }

  /** Sends a notification; one the client cannot take (it went away) costs only itself. */
  private static void send(String kind, Runnable notification) {
    try {
      notification.run();
    } catch (RuntimeException e) {
      log.debug("{} notification not sent: {}", kind, e.toString());
    }
  }

  private void cancelQuietly(String runId) {
    try {
      service.cancelRun(runId);
    } catch (RuntimeException e) {
      log.warn("cancelling {} for a cancelled call failed: {}", runId, e.getMessage());
    }
  }

  /** The call is answered: no more progress. */
  @Override
  public synchronized void close() {
    closed = true;
    if (ticker != null) {
      ticker.cancel(false);
    }
  }
}
