package dev.pysandbox.egress;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The in-sandbox forwarder ({@code egress_forward.py}) run for real, with the host's Python,
 * listening on a free loopback port and piping to one door's socket.
 */
final class Forwarder implements AutoCloseable {
  static final String PYTHON = "/usr/bin/python3";

  private final Process process;
  private final int port;

  Forwarder(Path workDir, Path socket) throws Exception {
    Path script = workDir.resolve("egress_forward.py");
    if (!Files.exists(script)) {
      try (InputStream in =
          Forwarder.class.getResourceAsStream("/dev/pysandbox/worker/egress_forward.py")) {
        Files.copy(in, script);
      }
    }
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    process =
        new ProcessBuilder(
                PYTHON, "-I", "-S", script.toString(), String.valueOf(port), socket.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String first = CompletableFuture.supplyAsync(() -> readLine(out)).get(10, TimeUnit.SECONDS);
    assertThat(first).as("the forwarder's first line").isEqualTo("ready");
  }

  private static String readLine(BufferedReader reader) {
    try {
      return reader.readLine();
    } catch (IOException e) {
      return "failed: " + e;
    }
  }

  int port() {
    return port;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
