package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.api.ApiPrincipal;
import dev.pysandbox.api.Json;
import dev.pysandbox.cli.Main;
import dev.pysandbox.store.ApiKeys;
import dev.pysandbox.store.jdbc.JdbcApiKeys;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line as a user meets it: bin/pysandbox with the packaged jar. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class CliIT {
  @TempDir Path dataDir;

  @Test
  void run_printsOutput_andExitCodesFollowTheRun() throws Exception {
    ServerProcess.Result ok = ServerProcess.run(dataDir, null, "run", "-c", "print(6*7)\n'done'");
    assertThat(ok.exit()).isZero();
    assertThat(ok.stdout()).isEqualTo("42\n'done'\n");
    assertThat(ok.stderr()).contains("succeeded").contains("pysandbox runs show run_");

    ServerProcess.Result failed = ServerProcess.run(dataDir, null, "run", "-c", "1/0");
    assertThat(failed.exit()).isEqualTo(1);
    assertThat(failed.stderr()).contains("ZeroDivisionError");

    assertThat(ServerProcess.run(dataDir, null, "run", "-c", "import sys; sys.exit(3)").exit())
        .isEqualTo(3);
    assertThat(
            ServerProcess.run(dataDir, null, "run", "--timeout", "1", "-c", "while True: pass")
                .exit())
        .isEqualTo(124);
    ServerProcess.Result fromStdin = ServerProcess.run(dataDir, "print('piped')", "run", "-");
    assertThat(fromStdin.stdout()).isEqualTo("piped\n");
  }

  @Test
  void runsListAndShow_readTheHistory() throws Exception {
    ServerProcess.Result ok = ServerProcess.run(dataDir, null, "run", "-c", "print('for history')");
    String runId = ok.stderr().replaceAll("(?s).*runs show (run_[0-9a-f]+).*", "$1");
    ServerProcess.Result list = ServerProcess.run(dataDir, null, "runs", "list");
    assertThat(list.exit()).isZero();
    assertThat(list.stdout())
        .contains(runId)
        .contains("succeeded")
        .contains("print('for history')");
    ServerProcess.Result show = ServerProcess.run(dataDir, null, "runs", "show", runId);
    assertThat(show.stdout()).contains("print('for history')").contains("for history\n");
    ServerProcess.Result missing = ServerProcess.run(dataDir, null, "runs", "show", "run_nope");
    assertThat(missing.exit()).isEqualTo(3);
    assertThat(missing.stderr()).contains("not_found");
  }

  @Test
  void runFollow_printsOutputAsItIsPrinted() throws Exception {
    // The run sleeps for a minute after 'a': 'a' must reach the terminal while it is running.
    Process p =
        cli(
            "--data-dir",
            dataDir.toString(),
            "run",
            "--follow",
            "-c",
            "import time\nprint('a', flush=True)\ntime.sleep(60)\nprint('b')\n");
    try {
      assertThat(firstLine(p)).isEqualTo("a");
      assertThat(runningRuns()).as("'a' printed while the run still runs").contains("running");
    } finally {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void runNoFollow_printsAtTheEnd() throws Exception {
    Process p =
        cli(
            "--data-dir",
            dataDir.toString(),
            "run",
            "--no-follow",
            "-c",
            "import time\nprint('a', flush=True)\ntime.sleep(1.5)\nprint('b')\n");
    var out = reader(p);
    assertThat(out.readLine()).isEqualTo("a");
    assertThat(runningRuns()).as("'a' printed once the run had ended").doesNotContain("running");
    assertThat(out.readLine()).isEqualTo("b");
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isZero();
  }

  @Test
  void runsWatch_followsARunOfAServerProcess_asItPrints(@TempDir Path work) throws Exception {
    try (HttpServerProcess server =
        HttpServerProcess.start(dataDir, work, "--set", "http_auth=none")) {
      String code = "import time\\nprint('a', flush=True)\\ntime.sleep(60)\\nprint('b')\\n";
      var http = java.net.http.HttpClient.newHttpClient();
      var started =
          http.send(
              java.net.http.HttpRequest.newBuilder(server.uri().resolve("/api/v1/runs"))
                  .header("Content-Type", "application/json")
                  .POST(
                      java.net.http.HttpRequest.BodyPublishers.ofString(
                          "{\"code\": \"" + code + "\", \"async_mode\": true}"))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
      String runId = started.body().replaceAll("(?s).*\"run_id\":\"(run_[0-9a-f]+)\".*", "$1");
      Process watch = cli("--data-dir", dataDir.toString(), "runs", "watch", runId);
      try {
        assertThat(firstLine(watch)).isEqualTo("a");
        var status =
            http.send(
                java.net.http.HttpRequest.newBuilder(server.uri().resolve("/api/v1/runs/" + runId))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(status.body())
            .as("'a' shown while the server's run still runs")
            .containsPattern("\"status\"\\s*:\\s*\"running\"");
        http.send(
            java.net.http.HttpRequest.newBuilder(
                    server.uri().resolve("/api/v1/runs/" + runId + "/cancel"))
                .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(watch.waitFor(60, TimeUnit.SECONDS)).as("watch ends with the run").isTrue();
      } finally {
        watch.destroyForcibly();
      }
    }
  }

  private static java.io.BufferedReader reader(Process p) {
    return new java.io.BufferedReader(
        new java.io.InputStreamReader(p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
  }

  private static String firstLine(Process p) throws java.io.IOException {
    return reader(p).readLine();
  }

  /** What `runs list --status running` says of this data directory, as JSON. */
  private String runningRuns() throws Exception {
    return ServerProcess.run(dataDir, null, "runs", "list", "--status", "running", "--json")
        .stdout();
  }

  /** The CLI started as a user would, its stderr dropped. */
  private static Process cli(String... args) throws java.io.IOException {
    List<String> cmd = new java.util.ArrayList<>();
    cmd.add(dev.pysandbox.TestServices.launcher().toString());
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
  }

  /**
   * Reads the lines "a" and "b" the process prints and returns the milliseconds between their
   * arrival; the process must then exit 0.
   */
  @Test
  void runsAndSessions_ofAnotherTenant_areSeenOnlyWithTenant() throws Exception {
    String runId;
    try (var core = dev.pysandbox.TestServices.start(dataDir, java.util.Map.of())) {
      var alice = core.forTenant("alice");
      runId = alice.run(dev.pysandbox.api.ExecutionRequest.of("print('alice ran')")).runId();
    }
    ServerProcess.Result local = ServerProcess.run(dataDir, null, "runs", "list");
    assertThat(local.exit()).isZero();
    assertThat(local.stdout()).doesNotContain(runId).contains("(0 of 0 runs)");
    ServerProcess.Result hers =
        ServerProcess.run(dataDir, null, "runs", "list", "--tenant", "alice");
    assertThat(hers.stdout()).contains(runId).contains("print('alice ran')");
    ServerProcess.Result show =
        ServerProcess.run(dataDir, null, "runs", "show", runId, "--tenant", "alice");
    assertThat(show.stdout()).contains("alice ran\n");
    ServerProcess.Result notLocal = ServerProcess.run(dataDir, null, "runs", "show", runId);
    assertThat(notLocal.exit()).as("another tenant's run is not found").isEqualTo(3);
    ServerProcess.Result bad = ServerProcess.run(dataDir, null, "runs", "list", "--tenant", "A B");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.stderr()).contains("tenant");
  }

  @Test
  void runsShow_escapesTerminalControlSequences_whileTheRecordKeepsTheBytes() throws Exception {
    // A clipboard write (OSC 52), a screen clear and a title change, printed by the code.
    String code =
        "import sys\n"
            + "sys.stdout.write('\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J')\n"
            + "sys.stderr.write('\\x1b]0;owned\\x07')\n"
            + "raise ValueError('\\x1b[31mred')";
    ServerProcess.Result ran = ServerProcess.run(dataDir, null, "run", "-c", code);
    String runId = ran.stderr().replaceAll("(?s).*runs show (run_[0-9a-f]+).*", "$1");
    ServerProcess.Result show = ServerProcess.run(dataDir, null, "runs", "show", runId);
    assertThat(show.stdout()).doesNotContain("\u001b").doesNotContain("\u0007");
    assertThat(show.stdout()).contains("\\x1b]52;c;ZXZpbA==\\x07").contains("\\x1b[31mred");
    ServerProcess.Result list = ServerProcess.run(dataDir, null, "runs", "list");
    assertThat(list.stdout()).doesNotContain("\u001b");
    ServerProcess.Result json = ServerProcess.run(dataDir, null, "runs", "show", runId, "--json");
    assertThat(json.stdout()).contains("\\u001B]52;c;ZXZpbA==");
  }

  @Test
  void missingBubblewrap_givesOneClearMessageNamingThePackage() throws Exception {
    ServerProcess.Result r =
        ServerProcess.run(
            dataDir, null, "run", "-c", "print(1)", "--set", "bwrap=/nonexistent/bwrap");
    assertThat(r.exit()).isEqualTo(7);
    assertThat(r.stderr())
        .contains("apt-get install bubblewrap")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void missingPython_givesOneClearMessageNamingThePackage() throws Exception {
    ServerProcess.Result r =
        ServerProcess.run(
            dataDir, null, "run", "-c", "print(1)", "--python", "/nonexistent/python3");
    assertThat(r.exit()).isEqualTo(7);
    assertThat(r.stderr()).contains("apt-get install python3").doesNotContain("\tat ");
    ServerProcess.Result doctor =
        ServerProcess.run(dataDir, null, "doctor", "--python", "/nonexistent/python3");
    assertThat(doctor.exit()).isEqualTo(7);
    assertThat(doctor.stdout()).contains("python3");
  }

  @Test
  void doctor_onThisMachine_findsEverything() throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "doctor");
    assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
    assertThat(r.stdout())
        .contains("backend bwrap: ok")
        .contains("numpy")
        .contains("everything needed is installed");
  }

  @Test
  void sessionsListAndClose_reachTheServerThatOwnsThem() throws Exception {
    Process server =
        new ProcessBuilder(
                dev.pysandbox.TestServices.launcher().toString(),
                "serve",
                "--data-dir",
                dataDir.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      String requests =
          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
              + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
              + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"create_session\",\"arguments\":{\"session_id\":\"from-cli\"}}}\n";
      server.getOutputStream().write(requests.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      server.getOutputStream().flush();
      var out = new java.io.BufferedReader(new java.io.InputStreamReader(server.getInputStream()));
      out.readLine();
      assertThat(out.readLine()).contains("from-cli");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      ServerProcess.Result list;
      do {
        list = ServerProcess.run(dataDir, null, "sessions", "list");
      } while (!list.stdout().contains("from-cli") && System.nanoTime() < deadline);
      assertThat(list.stdout()).contains("from-cli").contains("idle");
      ServerProcess.Result close =
          ServerProcess.run(dataDir, null, "sessions", "close", "from-cli");
      assertThat(close.exit()).as(close.stderr()).isZero();
      assertThat(ServerProcess.run(dataDir, null, "sessions", "list").stdout())
          .doesNotContain("from-cli");
      assertThat(ServerProcess.run(dataDir, null, "sessions", "close", "nope").exit()).isEqualTo(3);
    } finally {
      server.destroy();
      server.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void keys_createListRevoke_andARevocationReachesAnotherProcessWithinTwoSeconds()
      throws Exception {
    ServerProcess.Result created =
        ServerProcess.run(dataDir, null, "keys", "create", "--tenant", "acme", "--label", "ci bot");
    assertThat(created.exit()).as(created.stderr()).isZero();
    // stdout is the key and nothing else: KEY=$(pysandbox keys create ...) must work.
    assertThat(created.stdout()).matches("psk_[A-Za-z0-9_-]{43}\n");
    String key = created.stdout().strip();
    assertThat(created.stderr()).contains("shown once").doesNotContain(key);
    String keyId = created.stderr().replaceAll("(?s).*key (key_[0-9a-f]{12}) .*", "$1");
    assertThat(keyId).matches("key_[0-9a-f]{12}");

    ServerProcess.Result list = ServerProcess.run(dataDir, null, "keys", "list");
    assertThat(list.exit()).isZero();
    assertThat(list.stdout())
        .contains(keyId)
        .contains("acme")
        .contains("ci bot")
        .contains("(1 keys)");
    assertThat(list.stdout() + list.stderr()).doesNotContain(key);
    var json =
        Json.mapper().readTree(ServerProcess.run(dataDir, null, "keys", "list", "--json").stdout());
    assertThat(json.get(0).get("key_id").asText()).isEqualTo(keyId);
    assertThat(json.get(0).get("revoked_at").isNull()).isTrue();

    // This JVM plays the HTTP server: another process on the same data directory.
    try (JdbcApiKeys server = JdbcApiKeys.openSqlite(dataDir.resolve("pysandbox.db"))) {
      assertThat(server.authenticate(key)).contains(new ApiPrincipal(keyId, "acme"));
      ServerProcess.Result revoke = ServerProcess.run(dataDir, null, "keys", "revoke", keyId);
      assertThat(revoke.exit()).as(revoke.stderr()).isZero();
      assertThat(revoke.stdout()).startsWith("key " + keyId + " revoked at ");
      Await.until(
          "the server refuses the revoked key",
          Duration.ofMillis(ApiKeys.REVOCATION_DELAY_MILLIS),
          () -> server.authenticate(key),
          Optional::isEmpty);
    }
    json =
        Json.mapper().readTree(ServerProcess.run(dataDir, null, "keys", "list", "--json").stdout());
    assertThat(json.get(0).get("revoked_at").isNull()).isFalse();

    ServerProcess.Result unknown =
        ServerProcess.run(dataDir, null, "keys", "revoke", "key_000000000000");
    assertThat(unknown.exit()).isEqualTo(3);
    assertThat(unknown.stderr()).contains("not_found");
    ServerProcess.Result badTenant =
        ServerProcess.run(dataDir, null, "keys", "create", "--tenant", "Acme Corp");
    assertThat(badTenant.exit()).isEqualTo(2);
    assertThat(badTenant.stderr()).contains("invalid_argument").contains("tenant");
    assertThat(badTenant.stdout()).isEmpty();
    ServerProcess.Result noTenant = ServerProcess.run(dataDir, null, "keys", "create");
    assertThat(noTenant.exit()).isEqualTo(2);
    assertThat(noTenant.stdout()).isEmpty();
  }

  @Test
  void events_fromAnotherDirectory_listTheRunStoppedByItsTimeout(@TempDir Path elsewhere)
      throws Exception {
    ServerProcess.Result timedOut =
        ServerProcess.run(dataDir, null, "run", "--timeout", "1", "-c", "while True: pass");
    assertThat(timedOut.exit()).as(timedOut.stderr()).isEqualTo(124);
    String runId =
        timedOut.stderr().replaceAll("(?s).*pysandbox runs show (run_[0-9a-f]+).*", "$1");
    assertThat(runId).matches("run_[0-9a-f]{20}");

    ServerProcess.Result json = ServerProcess.runIn(elsewhere, dataDir, null, "events", "--json");
    assertThat(json.exit()).as(json.stderr()).isZero();
    var page = Json.mapper().readTree(json.stdout());
    assertThat(page.path("events")).hasSize(1);
    var event = page.path("events").get(0);
    assertThat(event.path("kind").asText()).isEqualTo("limit_stopped_run");
    assertThat(event.path("run_id").asText()).isEqualTo(runId);
    assertThat(event.path("detail").path("limit").asText()).isEqualTo("timeout");
    assertThat(event.path("detail").path("limits").path("timeout_seconds").asInt()).isEqualTo(1);
    assertThat(event.has("tenant")).isFalse();
    assertThat(page.path("next_cursor").isNull()).isTrue();

    ServerProcess.Result text =
        ServerProcess.runIn(
            elsewhere, dataDir, null, "events", "--since", "1h", "--kind", "limit_stopped_run");
    assertThat(text.exit()).as(text.stderr()).isZero();
    assertThat(text.stdout())
        .startsWith("AT ")
        .contains("limit_stopped_run")
        .contains(runId)
        .contains("\"limit\":\"timeout\"")
        .endsWith("(1 events)\n");

    ServerProcess.Result otherTenant =
        ServerProcess.runIn(elsewhere, dataDir, null, "events", "--json", "--tenant", "alice");
    assertThat(Json.mapper().readTree(otherTenant.stdout()).path("events")).isEmpty();

    ServerProcess.Result badKind =
        ServerProcess.runIn(elsewhere, dataDir, null, "events", "--kind", "oom");
    assertThat(badKind.exit()).isEqualTo(2);
    assertThat(badKind.stderr())
        .contains("invalid_argument")
        .contains("unknown kind 'oom'")
        .contains("limit_stopped_run, import_denied");
    assertThat(badKind.stdout()).isEmpty();
  }

  /**
   * Regression: `pysandbox runs list --help` and the like failed with "Unknown option". Every
   * subcommand's help is parsed and printed by the CLI's own picocli tree in this JVM (a process
   * each took 40 JVM starts); one goes through bin/pysandbox as a user types it.
   */
  @Test
  void help_onEverySubcommand_printsItsUsage() throws Exception {
    // One tree for every call (building it is the slow part): picocli resets each command's
    // options before it parses.
    CommandLine cli = Main.commandLine();
    List<List<String>> paths = new ArrayList<>();
    collectSubcommands(cli, List.of(), paths);
    assertThat(paths)
        .contains(List.of("runs", "list"), List.of("sessions", "close"), List.of("keys", "create"));
    for (List<String> path : paths) {
      List<String> args = new ArrayList<>(path);
      args.add("--help");
      java.io.StringWriter out = new java.io.StringWriter();
      java.io.StringWriter err = new java.io.StringWriter();
      cli.setOut(new java.io.PrintWriter(out, true));
      cli.setErr(new java.io.PrintWriter(err, true));
      int exit = cli.execute(args.toArray(String[]::new));
      assertThat(exit).as(String.join(" ", args) + ": " + err).isZero();
      assertThat(out.toString()).startsWith("Usage: pysandbox " + String.join(" ", path) + " ");
    }
    ServerProcess.Result real = ServerProcess.run(dataDir, null, "runs", "list", "--help");
    assertThat(real.exit()).as(real.stderr()).isZero();
    assertThat(real.stdout()).startsWith("Usage: pysandbox runs list ");
    assertThat(ServerProcess.run(dataDir, null, "runs", "list", "--version").stdout())
        .startsWith("pysandbox ");
  }

  private static void collectSubcommands(
      CommandLine command, List<String> path, List<List<String>> into) {
    command
        .getSubcommands()
        .forEach(
            (name, sub) -> {
              List<String> subPath = new ArrayList<>(path);
              subPath.add(name);
              into.add(subPath);
              collectSubcommands(sub, subPath, into);
            });
  }

  @Test
  void badSetting_isRejectedNamingIt() throws Exception {
    ServerProcess.Result r =
        ServerProcess.run(dataDir, null, "run", "-c", "print(1)", "--set", "timeout_max=0");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.stderr()).contains("timeout_max");
  }
}
