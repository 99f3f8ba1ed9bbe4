package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import dev.pysandbox.agent.ScriptedModelServer;
import dev.pysandbox.agent.ScriptedReply;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pysandbox agent run|show|list|cancel} as a user meets them (bin/pysandbox with the
 * packaged jar): an unknown id, no model under sampling, and agent runs whose model is an
 * OpenAI-compatible service scripted on loopback — each step printed as it happens and the answer
 * on stdout, a budget run out (exit 1), and a process stopped mid-run cancelling its agent run.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class CliAgentIT {
  static final String KEY = "sk-cli-test-0123456789abcdef";

  @TempDir Path dataDir;
  ScriptedModelServer model;

  @BeforeEach
  void start() throws Exception {
    model = new ScriptedModelServer();
  }

  @AfterEach
  void stop() {
    model.close();
  }

  /** The settings that make the scripted server the model; the key from the environment. */
  private String[] withModel(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(
        List.of(
            "--set",
            "agent_provider=openai",
            "--set",
            "agent_base_url=" + model.baseUrl(),
            "--set",
            "agent_model=scripted-model"));
    return all.toArray(String[]::new);
  }

  private ServerProcess.Result cli(String... args) throws Exception {
    return ServerProcess.runWith(null, dataDir, Map.of("PYSANDBOX_AGENT_API_KEY", KEY), null, args);
  }

  @Test
  void showAndCancelOfAnUnknownId_exit3_withNotFoundOnStderr_andListIsEmpty() throws Exception {
    ServerProcess.Result show = cli("agent", "show", "agr_0000000000000000");
    assertThat(show.exit()).isEqualTo(3);
    assertThat(show.stderr()).contains("not_found").contains("agr_0000000000000000");
    assertThat(show.stdout()).isEmpty();

    ServerProcess.Result cancel = cli("agent", "cancel", "agr_0000000000000000");
    assertThat(cancel.exit()).isEqualTo(3);

    ServerProcess.Result bad = cli("agent", "show", "not an id");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.stderr()).contains("invalid_argument");

    ServerProcess.Result list = cli("agent", "list");
    assertThat(list.exit()).isZero();
    assertThat(list.stdout()).contains("AGENT RUN").contains("(0 agent runs)");
  }

  @Test
  void agentRun_underSampling_isTheClearInvalidArgument_exit2() throws Exception {
    ServerProcess.Result r = cli("agent", "run", "add 1 and 2");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.stderr())
        .contains("invalid_argument")
        .contains("agent_provider is sampling")
        .contains("openai");
    assertThat(model.requests()).isEmpty();
  }

  @Test
  void agentRun_printsEachStep_thenTheAnswer_andShowAndListFindIt() throws Exception {
    model.enqueue(
        ScriptedReply.toolCall("run_python", "{\"code\": \"print(sum(range(10)))\"}")
            .usage(120, 30),
        ScriptedReply.text("The sum is 45.\nThat is all.").usage(200, 10));
    ServerProcess.Result r = cli(withModel("agent", "run", "sum 0..9", "--max-iterations", "5"));

    assertThat(r.exit()).as(r.stderr()).isZero();
    assertThat(r.stdout()).isEqualTo("The sum is 45.\nThat is all.\n");
    assertThat(r.stderr())
        .containsPattern("\\[0\\] model .*\\[calls run_python\\]  tokens 120 in / 30 out")
        .containsPattern("\\[1\\] code +print\\(sum\\(range\\(10\\)\\)\\) -> run_[0-9a-f]+ running")
        .containsPattern("\\[1\\] code .* succeeded \\([0-9]+ ms\\): 45")
        .containsPattern("\\[2\\] model +The sum is 45\\. \\.\\.\\.  tokens 200 in / 10 out")
        .contains("succeeded (the model gave its final answer)")
        .doesNotContain(KEY);
    String id = r.stderr().replaceAll("(?s).*agent run (agr_[0-9a-f]{16}) started.*", "$1");

    ServerProcess.Result show = cli("agent", "show", id);
    assertThat(show.exit()).isZero();
    assertThat(show.stdout())
        .contains("status:      succeeded")
        .contains("--- task ---\nsum 0..9")
        .contains("--- answer ---\nThe sum is 45.");
    ServerProcess.Result json = cli("agent", "show", id, "--json");
    assertThat(json.stdout()).contains("\"agent_run_id\" : \"" + id + "\"");
    ServerProcess.Result list = cli("agent", "list", "--status", "succeeded");
    assertThat(list.stdout()).contains(id).contains("sum 0..9").contains("(1 agent runs)");
  }

  @Test
  void agentRun_thatRunsOutOfIterations_exits1_withTheBudgetNamed() throws Exception {
    model.fallback(n -> ScriptedReply.text("```python\nprint(" + n + ")\n```").usage(10, 10));
    ServerProcess.Result r =
        cli(withModel("agent", "run", "count for ever", "--max-iterations", "2", "--json"));
    assertThat(r.exit()).as(r.stderr()).isEqualTo(1);
    assertThat(r.stdout())
        .contains("\"status\" : \"budget_exhausted\"")
        .contains("\"stop_reason\" : \"max_iterations: 2 model replies");
  }

  @Test
  void agentRun_stoppedMidModelCall_cancelsItsAgentRun() throws Exception {
    model.fallback(n -> ScriptedReply.hang());
    List<String> cmd = new ArrayList<>();
    cmd.add(TestServices.launcher().toString());
    cmd.addAll(List.of(withModel("agent", "run", "think hard")));
    cmd.addAll(List.of("--data-dir", dataDir.toString()));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("PYSANDBOX_AGENT_API_KEY", KEY);
    Process p = pb.start();
    try {
      BufferedReader err =
          new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
      String first = err.readLine();
      assertThat(first).contains("started in session");
      String id = first.replaceAll(".*agent run (agr_[0-9a-f]{16}) started.*", "$1");
      assertThat(model.awaitRequests(1, Duration.ofSeconds(60))).isTrue();

      p.destroy(); // SIGTERM, as Ctrl-C's SIGINT: the JVM's shutdown hooks run
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();

      ServerProcess.Result show = cli("agent", "show", id);
      assertThat(show.stdout()).contains("status:      cancelled");
    } finally {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }
}
