package dev.pysandbox.e2e;

import dev.pysandbox.TestServices;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@code bin/pysandbox} as a user would, capturing its output. */
final class ServerProcess {
  record Result(int exit, String stdout, String stderr) {}

  private ServerProcess() {}

  static Result run(Path dataDir, String stdin, String... args)
      throws IOException, InterruptedException {
    return runIn(null, dataDir, stdin, args);
  }

  /** As {@link #run}, started in {@code cwd} (a user's own directory, not the checkout). */
  static Result runIn(Path cwd, Path dataDir, String stdin, String... args)
      throws IOException, InterruptedException {
    return runWith(cwd, dataDir, java.util.Map.of(), stdin, args);
  }

  /** As {@link #runIn}, with {@code env} over the inherited environment (e.g. another PATH). */
  static Result runWith(
      Path cwd, Path dataDir, java.util.Map<String, String> env, String stdin, String... args)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(TestServices.launcher().toString());
    cmd.addAll(List.of(args));
    cmd.add("--data-dir");
    cmd.add(dataDir.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().putAll(env);
    if (cwd != null) {
      pb.directory(cwd.toFile());
    }
    Process p = pb.start();
    if (stdin != null) {
      p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    p.getOutputStream().close();
    var err = new java.util.concurrent.CompletableFuture<String>();
    Thread t =
        new Thread(
            () -> {
              try {
                err.complete(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
              } catch (IOException e) {
                err.complete("");
              }
            });
    t.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(90, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("pysandbox " + String.join(" ", args) + " did not finish");
    }
    t.join();
    return new Result(p.exitValue(), out, err.join());
  }
}
