package dev.pysandbox.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.TestServices;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code bin/pysandbox serve} started the way a desktop client starts it (from its own working
 * directory, here {@code /}), spoken to line by line: what an SDK client would never send
 * (malformed lines, oversized messages) can be sent, and every line the server writes is kept.
 */
final class RawMcpClient implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  final Process process;
  private final OutputStream stdin;
  private final Map<String, BlockingQueue<JsonNode>> byId = new ConcurrentHashMap<>();
  private final BlockingQueue<JsonNode> withoutId = new LinkedBlockingQueue<>();
  final List<String> stdoutLines = new CopyOnWriteArrayList<>();
  final List<String> stderrLines = new CopyOnWriteArrayList<>();
  private final AtomicInteger ids = new AtomicInteger(1000);
  private final Thread reader;
  private final Thread err;

  RawMcpClient(Path dataDir, String... settings) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(TestServices.launcher().toString());
    cmd.add("serve");
    cmd.add("--data-dir");
    cmd.add(dataDir.toString());
    for (String s : settings) {
      cmd.add("--set");
      cmd.add(s);
    }
    process = new ProcessBuilder(cmd).directory(Path.of("/").toFile()).start();
    stdin = process.getOutputStream();
    reader = new Thread(this::readStdout, "raw-mcp-stdout");
    reader.setDaemon(true);
    reader.start();
    err =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  stderrLines.add(line);
                }
              } catch (IOException e) {
                // gone
              }
            },
            "raw-mcp-stderr");
    err.setDaemon(true);
    err.start();
  }

  private void readStdout() {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        stdoutLines.add(line);
        JsonNode msg;
        try {
          msg = JSON.readTree(line);
        } catch (IOException e) {
          continue; // kept in stdoutLines; tests assert every line is JSON-RPC
        }
        JsonNode id = msg.get("id");
        if (id == null || id.isNull()) {
          withoutId.add(msg);
        } else {
          byId.computeIfAbsent(id.asText(), k -> new LinkedBlockingQueue<>()).add(msg);
        }
      }
    } catch (IOException e) {
      // the server closed stdout
    }
  }

  /** Sends initialize and initialized; returns the initialize answer. */
  JsonNode initialize() throws Exception {
    JsonNode answer =
        request(
            "initialize",
            Map.of(
                "protocolVersion",
                "2025-06-18",
                "capabilities",
                Map.of(),
                "clientInfo",
                Map.of("name", "raw", "version", "1")),
            60);
    sendLine("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return answer;
  }

  void sendLine(String line) throws IOException {
    sendBytes((line + "\n").getBytes(StandardCharsets.UTF_8));
  }

  synchronized void sendBytes(byte[] bytes) throws IOException {
    stdin.write(bytes);
    stdin.flush();
  }

  int nextId() {
    return ids.incrementAndGet();
  }

  /** Sends a request and waits for its answer. */
  JsonNode request(String method, Object params, int timeoutSeconds) throws Exception {
    int id = nextId();
    send(id, method, params);
    return answer(id, timeoutSeconds);
  }

  void send(int id, String method, Object params) throws IOException {
    ObjectNode msg = JSON.createObjectNode();
    msg.put("jsonrpc", "2.0");
    msg.put("id", id);
    msg.put("method", method);
    if (params != null) {
      msg.set("params", JSON.valueToTree(params));
    }
    sendLine(JSON.writeValueAsString(msg));
  }

  /** Starts a tools/call without waiting; {@link #answer} gets its answer. */
  int callLater(String tool, Map<String, Object> arguments) throws IOException {
    int id = nextId();
    send(id, "tools/call", Map.of("name", tool, "arguments", arguments));
    return id;
  }

  /** A tools/call, answered. */
  JsonNode call(String tool, Map<String, Object> arguments, int timeoutSeconds) throws Exception {
    return request("tools/call", Map.of("name", tool, "arguments", arguments), timeoutSeconds);
  }

  /** The answer with this id; fails when none comes in time. */
  JsonNode answer(Object id, int timeoutSeconds) throws InterruptedException {
    JsonNode msg =
        byId.computeIfAbsent(String.valueOf(id), k -> new LinkedBlockingQueue<>())
            .poll(timeoutSeconds, TimeUnit.SECONDS);
    if (msg == null) {
      throw new AssertionError(
          "no answer to request "
              + id
              + " within "
              + timeoutSeconds
              + " s; stderr: "
              + stderrTail());
    }
    return msg;
  }

  /** The next answer with a null id (to a line whose id could not be read). */
  JsonNode answerWithoutId(int timeoutSeconds) throws InterruptedException {
    JsonNode msg = withoutId.poll(timeoutSeconds, TimeUnit.SECONDS);
    if (msg == null) {
      throw new AssertionError("no answer with a null id; stderr: " + stderrTail());
    }
    return msg;
  }

  /** True when an answer with this id arrives within the time. */
  boolean answered(Object id, long millis) throws InterruptedException {
    BlockingQueue<JsonNode> q =
        byId.computeIfAbsent(String.valueOf(id), k -> new LinkedBlockingQueue<>());
    return q.poll(millis, TimeUnit.MILLISECONDS) != null;
  }

  /**
   * Waits until the server's stdout is closed and every line it wrote is in {@link #stdoutLines}.
   */
  /** Waits until the server has closed stdout and stderr and both have been read to the end. */
  void awaitOutputClosed(int timeoutSeconds) throws InterruptedException {
    reader.join(TimeUnit.SECONDS.toMillis(timeoutSeconds));
    if (reader.isAlive()) {
      throw new AssertionError("the server's stdout is still open after " + timeoutSeconds + " s");
    }
    err.join(TimeUnit.SECONDS.toMillis(timeoutSeconds));
    if (err.isAlive()) {
      throw new AssertionError("the server's stderr is still open after " + timeoutSeconds + " s");
    }
  }

  void closeStdin() throws IOException {
    stdin.close();
  }

  String stderrTail() {
    int n = stderrLines.size();
    return String.join("\n", stderrLines.subList(Math.max(0, n - 20), n));
  }

  @Override
  public void close() throws IOException {
    try {
      stdin.close();
    } catch (IOException e) {
      // already closed
    }
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
