package dev.pysandbox.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * A language model provider on loopback for the agent tests, a real HTTP peer for LangChain4j as in
 * production: {@code POST /v1/chat/completions} speaks OpenAI's chat completions, {@code POST
 * /v1/messages} Anthropic's messages (so both base URLs are {@link #baseUrl()}). Tests queue {@link
 * ScriptedReply replies}; when the queue is empty the {@link #fallback} answers (by default a 500
 * saying that nothing was scripted). Every request is recorded, its body as JSON and its headers,
 * so a test can check what the second request carried.
 *
 * <p>{@link #close()} ends requests still held by {@link ScriptedReply#hang()} or a delay.
 */
public final class ScriptedModelServer implements AutoCloseable {
  /** One request as received. */
  public record Recorded(
      int number, String path, Map<String, List<String>> headers, JsonNode body) {
    /** The header's first value, or null; names are case-insensitive. */
    public String header(String name) {
      List<String> values = headers.get(name);
      return values == null || values.isEmpty() ? null : values.get(0);
    }

    /** Whether it came in on the Anthropic path. */
    public boolean anthropic() {
      return path.endsWith("/messages");
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  static {
    // Headers and body are written apart: without this the body waits for a delayed ACK (40 ms).
    System.setProperty("sun.net.httpserver.nodelay", "true");
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final Deque<ScriptedReply> queue = new ArrayDeque<>();
  private final List<Recorded> requests = new ArrayList<>();
  private final AtomicInteger numbers = new AtomicInteger();
  private final AtomicInteger aborted = new AtomicInteger();
  private volatile CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch closed = new CountDownLatch(1);
  private volatile IntFunction<ScriptedReply> fallback = n -> ScriptedReply.unscripted(n);

  public ScriptedModelServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(threads);
    server.createContext("/v1/chat/completions", this::handle);
    server.createContext("/v1/messages", this::handle);
    server.start();
  }

  /** {@code http://127.0.0.1:PORT/v1}: the base URL of both wires. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  /** Queues replies, answered in order by the next requests. */
  public synchronized ScriptedModelServer enqueue(ScriptedReply... replies) {
    queue.addAll(List.of(replies));
    return this;
  }

  /** What answers when the queue is empty, from the request's number (1 for the first). */
  public ScriptedModelServer fallback(IntFunction<ScriptedReply> fallback) {
    this.fallback = fallback;
    return this;
  }

  /** The requests received so far, in order. */
  public synchronized List<Recorded> requests() {
    return List.copyOf(requests);
  }

  /** The {@code n}th request (1 for the first). */
  public synchronized Recorded request(int n) {
    return requests.get(n - 1);
  }

  /** Waits until {@code n} requests have come in; false when {@code timeout} passed first. */
  public synchronized boolean awaitRequests(int n, Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (requests.size() < n) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** Ends the requests held open so far (each then closes its exchange, with no answer). */
  public void release() {
    CountDownLatch old = release;
    release = new CountDownLatch(1);
    old.countDown();
  }

  /** Held requests whose client went away before they were released. */
  public int aborted() {
    return aborted.get();
  }

  /** Waits until a held request has seen its client go away; false when the timeout passed. */
  public boolean awaitAborted(Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    synchronized (aborted) {
      while (aborted.get() == 0) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(aborted, left);
      }
    }
    return true;
  }

  @Override
  public void close() {
    closed.countDown();
    release.countDown();
    server.stop(0);
    threads.shutdownNow();
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      byte[] raw = x.getRequestBody().readAllBytes();
      int number = numbers.incrementAndGet();
      String path = x.getRequestURI().getPath();
      Recorded recorded = new Recorded(number, path, headers(x), body(raw));
      ScriptedReply reply;
      synchronized (this) {
        requests.add(recorded);
        notifyAll();
        reply = queue.isEmpty() ? fallback.apply(number) : queue.poll();
      }
      if (!reply.delay.isZero() && closed.await(reply.delay.toMillis(), TimeUnit.MILLISECONDS)) {
        return;
      }
      answer(x, reply, recorded);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void answer(HttpExchange x, ScriptedReply reply, Recorded request)
      throws IOException, InterruptedException {
    boolean anthropic = request.anthropic();
    switch (reply.kind) {
      case ANSWER ->
          send(x, 200, anthropic ? Wire.anthropic(reply, request) : Wire.openAi(reply, request));
      case STATUS -> {
        if (reply.retryAfter != null) {
          x.getResponseHeaders().add("Retry-After", reply.retryAfter);
        }
        send(x, reply.status, Wire.error(reply, anthropic));
      }
      case MALFORMED -> send(x, 200, "<html>this is not JSON</html>");
      case HANG -> hold(x);
    }
  }

  /** Status 200, then a space every 50 ms (valid JSON whitespace) until released or gone. */
  private void hold(HttpExchange x) throws IOException, InterruptedException {
    CountDownLatch until = release;
    x.getResponseHeaders().add("Content-Type", "application/json");
    x.sendResponseHeaders(200, 0);
    OutputStream out = x.getResponseBody();
    while (!until.await(50, TimeUnit.MILLISECONDS) && closed.getCount() > 0) {
      try {
        out.write(' ');
        out.flush();
      } catch (IOException gone) {
        synchronized (aborted) {
          aborted.incrementAndGet();
          aborted.notifyAll();
        }
        return;
      }
    }
  }

  private static void send(HttpExchange x, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().add("Content-Type", "application/json");
    x.sendResponseHeaders(status, bytes.length);
    x.getResponseBody().write(bytes);
  }

  private static Map<String, List<String>> headers(HttpExchange x) {
    Map<String, List<String>> out = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    x.getRequestHeaders().forEach((k, v) -> out.put(k, List.copyOf(v)));
    return out;
  }

  private static JsonNode body(byte[] raw) {
    try {
      return JSON.readTree(raw);
    } catch (IOException e) {
      return TextNode.valueOf(new String(raw, StandardCharsets.UTF_8));
    }
  }

  /** The two wire formats of an answer and of an error. */
  static final class Wire {
    private Wire() {}

    static String openAi(ScriptedReply r, Recorded request) {
      ObjectNode message = JSON.createObjectNode().put("role", "assistant");
      if (r.text == null) {
        message.putNull("content");
      } else {
        message.put("content", r.text);
      }
      if (!r.calls.isEmpty()) {
        ArrayNode calls = message.putArray("tool_calls");
        for (int i = 0; i < r.calls.size(); i++) {
          ObjectNode call = calls.addObject().put("id", callId(request, i)).put("type", "function");
          call.putObject("function")
              .put("name", r.calls.get(i).name())
              .put("arguments", r.calls.get(i).argumentsJson());
        }
      }
      ObjectNode root =
          JSON.createObjectNode()
              .put("id", "chatcmpl-" + request.number())
              .put("object", "chat.completion")
              .put("created", 1_700_000_000L)
              .put("model", model(request));
      root.putArray("choices")
          .addObject()
          .put("index", 0)
          .put("finish_reason", r.calls.isEmpty() ? "stop" : "tool_calls")
          .set("message", message);
      if (r.promptTokens != null) {
        root.putObject("usage")
            .put("prompt_tokens", r.promptTokens)
            .put("completion_tokens", r.completionTokens)
            .put("total_tokens", r.promptTokens + r.completionTokens);
      }
      return root.toString();
    }

    static String anthropic(ScriptedReply r, Recorded request) {
      ObjectNode root =
          JSON.createObjectNode()
              .put("id", "msg_" + request.number())
              .put("type", "message")
              .put("role", "assistant")
              .put("model", model(request))
              .put("stop_reason", r.calls.isEmpty() ? "end_turn" : "tool_use")
              .putNull("stop_sequence");
      ArrayNode content = root.putArray("content");
      if (r.text != null) {
        content.addObject().put("type", "text").put("text", r.text);
      }
      for (int i = 0; i < r.calls.size(); i++) {
        ScriptedReply.Call c = r.calls.get(i);
        content
            .addObject()
            .put("type", "tool_use")
            .put("id", callId(request, i))
            .put("name", c.name())
            .set("input", input(c.argumentsJson()));
      }
      if (r.promptTokens != null) {
        root.putObject("usage")
            .put("input_tokens", r.promptTokens)
            .put("output_tokens", r.completionTokens);
      }
      return root.toString();
    }

    static String error(ScriptedReply r, boolean anthropic) {
      String type =
          r.status == 429
              ? "rate_limit_error"
              : r.status >= 500 ? "api_error" : "invalid_request_error";
      ObjectNode error = JSON.createObjectNode().put("type", type);
      error.put("message", r.text != null ? r.text : "scripted status " + r.status);
      ObjectNode root = JSON.createObjectNode();
      if (anthropic) {
        root.put("type", "error");
      }
      root.set("error", error);
      return root.toString();
    }

    /** {@code call_<request>_<index>}: unique over a server's life, so a test can name it. */
    static String callId(Recorded request, int index) {
      return "call_" + request.number() + "_" + index;
    }

    private static String model(Recorded request) {
      JsonNode model = request.body().path("model");
      return model.isTextual() ? model.asText() : "scripted-model";
    }

    /** Anthropic sends the arguments as an object: arguments that are not one go as a string. */
    private static JsonNode input(String argumentsJson) {
      try {
        JsonNode node = JSON.readTree(argumentsJson);
        return node != null && node.isObject() ? node : TextNode.valueOf(argumentsJson);
      } catch (IOException e) {
        return TextNode.valueOf(argumentsJson);
      }
    }
  }
}
