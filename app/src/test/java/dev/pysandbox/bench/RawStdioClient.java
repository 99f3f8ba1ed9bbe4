package dev.pysandbox.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The stdio twin of {@link RawMcpClient}: {@code serve} as a child process, JSON-RPC lines written
 * by hand, answers matched to their calls by id on one reader thread, so that many threads may call
 * at once. Every answer is checked.
 */
final class RawStdioClient implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final OutputStream in;
  private final AtomicLong ids = new AtomicLong(1);
  private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

  RawStdioClient(List<String> command) throws IOException, InterruptedException {
    process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    in = process.getOutputStream();
    Thread reader = new Thread(this::readAnswers, "bench-stdio-reader");
    reader.setDaemon(true);
    reader.start();
    request(
        "initialize",
        "{\"protocolVersion\":\""
            + RawMcpClient.PROTOCOL_VERSION
            + "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}");
    write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  }

  long pid() {
    return process.pid();
  }

  JsonNode request(String method, String params) throws IOException, InterruptedException {
    long id = ids.getAndIncrement();
    CompletableFuture<JsonNode> answer = new CompletableFuture<>();
    pending.put(id, answer);
    write(
        "{\"jsonrpc\":\"2.0\",\"id\":"
            + id
            + ",\"method\":\""
            + method
            + (params == null ? "\"}" : "\",\"params\":" + params + "}"));
    JsonNode message;
    try {
      message = answer.get(120, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IOException(method + " " + id + ": " + e.getMessage(), e);
    }
    if (message.has("error")) {
      throw new IllegalStateException("answer to " + id + ": " + message);
    }
    return message.path("result");
  }

  JsonNode callTool(String name, String arguments) throws IOException, InterruptedException {
    JsonNode result =
        request("tools/call", "{\"name\":\"" + name + "\",\"arguments\":" + arguments + "}");
    if (result.path("isError").asBoolean(false)) {
      throw new IllegalStateException(name + " failed: " + result.path("content"));
    }
    return result;
  }

  private void write(String line) throws IOException {
    byte[] bytes = (line + "\n").getBytes(StandardCharsets.UTF_8);
    synchronized (in) {
      in.write(bytes);
      in.flush();
    }
  }

  private void readAnswers() {
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        JsonNode message = JSON.readTree(line);
        CompletableFuture<JsonNode> answer =
            message.has("id") && !message.has("method")
                ? pending.remove(message.path("id").asLong())
                : null;
        if (answer != null) {
          answer.complete(message);
        }
      }
    } catch (IOException e) {
      // the server ended; the calls still waiting fail below
    }
    IOException ended = new IOException("serve ended (exit " + exitCode() + ")");
    pending.values().forEach(f -> f.completeExceptionally(ended));
  }

  private String exitCode() {
    return process.isAlive() ? "still running" : Integer.toString(process.exitValue());
  }

  /** Closes the server's stdin and waits for it to end (it is destroyed after 30 s). */
  @Override
  public void close() {
    try {
      in.close();
    } catch (IOException e) {
      // already gone
    }
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroy();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroy();
      Thread.currentThread().interrupt();
    }
  }
}
