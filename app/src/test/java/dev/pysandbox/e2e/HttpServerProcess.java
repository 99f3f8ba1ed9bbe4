package dev.pysandbox.e2e;

import dev.pysandbox.TestServices;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bin/pysandbox serve --http --port 0} as a user would start it, from a directory of the
 * test's choosing; knows its URL from the line it prints on stderr.
 */
final class HttpServerProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

  final Process process;
  final List<String> stderr = new CopyOnWriteArrayList<>();
  private final CompletableFuture<URI> uri = new CompletableFuture<>();

  private HttpServerProcess(Process process) {
    this.process = process;
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  stderr.add(line);
                  Matcher m = LISTENING.matcher(line);
                  if (m.find()) {
                    uri.complete(URI.create(m.group(1)));
                  }
                }
              } catch (IOException e) {
                // the process ended
              }
              uri.completeExceptionally(
                  new IllegalStateException("the server ended before listening: " + stderr));
            },
            "server-stderr");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts the server and waits until it listens.
   *
   * @param workDir the directory it is started from (not the checkout)
   */
  static HttpServerProcess start(Path dataDir, Path workDir, String... extraArgs) throws Exception {
    return start(dataDir, workDir, java.util.Map.of(), extraArgs);
  }

  /**
   * Starts the server with more in its environment (e.g. {@code PYSANDBOX_JAVA_OPTS}) and waits
   * until it listens.
   */
  static HttpServerProcess start(
      Path dataDir, Path workDir, java.util.Map<String, String> env, String... extraArgs)
      throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(TestServices.launcher().toString());
    cmd.addAll(List.of("serve", "--http", "--port", "0", "--data-dir", dataDir.toString()));
    cmd.addAll(List.of(extraArgs));
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(workDir.toFile())
            .redirectOutput(ProcessBuilder.Redirect.DISCARD);
    pb.environment().putAll(env);
    Process p = pb.start();
    HttpServerProcess server = new HttpServerProcess(p);
    try {
      server.uri.get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      server.close();
      throw e;
    }
    return server;
  }

  URI uri() {
    return uri.join();
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
