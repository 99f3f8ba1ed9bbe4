package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 items 8 and 9 ({@code __outputs__}): what the sandbox sends is bounded in depth and
 * size, by the runner before it serialises and again by the server when it reads (the code can
 * change the runner), and a run that passes a bound is recorded failed with the limit named. {@code
 * __outputs__} nested 985 deep once overflowed the server's stack: REST answered 500, MCP never
 * answered, the run stayed {@code running} for good.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class SandboxValuesTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  /** Finds the runner in the sandbox's own process and makes it send {@code what} anyway. */
  private static String tampered(String what) {
    return "import gc\n"
        + "r = next(o for o in gc.get_objects() if type(o).__name__ == 'Runner')\n"
        + "r._outputs = lambda max_bytes=None: {'values': "
        + what
        + ", 'non_json': []}\n";
  }

  private static final String DEEP_985 =
      "d = 0\nfor _ in range(985):\n    d = [d]\n__outputs__['deep'] = d\nprint('made')\n";

  @BeforeAll
  static void start() {
    service =
        TestServices.start(
            dataDir,
            TestServices.withoutImportPolicy(
                dataDir, Map.of("pool_size", "0", "outputs_max_mb", "1")));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  private static RunRecord run(String code, String session) {
    return service.run(new ExecutionRequest(code, session, null, 20));
  }

  @Test
  void outputsNested985Deep_failTheRun_namingTheLimit_andTheSessionLivesOn() {
    RunRecord r = run(DEEP_985, "deep");
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.error().name()).isEqualTo("OutputsRejected");
    assertThat(r.message()).contains("__outputs__['deep']").contains("deeper than 64 levels");
    assertThat(r.stdout()).isEqualTo("made\n");
    assertThat(r.outputs()).isEmpty();
    assertThat(service.getRun(r.runId(), false).status()).isEqualTo(RunStatus.FAILED);
    assertThat(run("print('alive')", "deep").stdout()).isEqualTo("alive\n");
  }

  @Test
  void outputsAtTheDepthLimit_areKept() {
    RunRecord r =
        run("d = 0\nfor _ in range(64):\n    d = [d]\n__outputs__['ok'] = d\n", "at-limit");
    assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.outputs()).containsKey("ok");
  }

  @Test
  void aTamperedRunner_sendingDeepOutputs_isReadNoDeeper_andTheRunFails() {
    String code = "d = 0\nfor _ in range(200):\n    d = [d]\n" + tampered("{'deep': d}");
    RunRecord r = run(code, "tampered-deep");
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.message()).contains("nested deeper than 64 levels");
    assertThat(run("print('alive')", "tampered-deep").stdout()).isEqualTo("alive\n");
  }

  @Test
  void outputsOverOutputsMaxMb_failTheRun_namingTheSetting() {
    RunRecord r = run("__outputs__['big'] = 'x' * (2 << 20)\n", "big");
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.message()).contains("outputs_max_mb").contains("1 MiB");
    assertThat(r.outputs()).isEmpty();
  }

  @Test
  void aTamperedRunner_sendingLargeOutputs_isCheckedByTheServer() {
    RunRecord r = run(tampered("{'big': 'x' * (2 << 20)}"), "tampered-big");
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.error().name()).isEqualTo("OutputsRejected");
    assertThat(r.message()).contains("outputs_max_mb");
    assertThat(r.outputs()).isEmpty();
  }

  @Test
  void aDeepVariable_inTheContext_comesBackAsItsRepr() {
    run("d = 0\nfor _ in range(985):\n    d = [d]\n", "context");
    var ctx = service.getContext("context", java.util.List.of("d"));
    assertThat(ctx.toString()).contains("repr");
  }
}
