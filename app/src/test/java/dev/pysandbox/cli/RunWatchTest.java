package dev.pysandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code runs watch} as the CLI runs it: its own read-only core on the data directory of a server
 * core that runs the code (two cores, as two processes would be).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Sandboxed
class RunWatchTest {
  @TempDir Path dataDir;

  @Test
  void watch_ofARunInAnotherCore_printsItsOutputWhenItEnds_andExitsWithItsCode() throws Exception {
    try (DefaultSandboxService server = TestServices.start(dataDir, Map.of());
        DefaultSandboxService cli = Assembly.openReadOnly(TestServices.config(dataDir, Map.of()))) {
      RunRecord begun =
          server.start(
              ExecutionRequest.of(
                  "import sys, time\nprint('first', flush=True)\ntime.sleep(1)\n"
                      + "print('oops', file=sys.stderr)\nsys.exit(3)"),
              RunListener.NONE);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int exit =
          RunWatch.watch(
              cli,
              begun.runId(),
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(err, true, StandardCharsets.UTF_8),
              false);
      assertThat(exit).isEqualTo(3);
      assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("first\n");
      assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("oops\n").contains("[pysandbox]");

      // A finished run: printed at once, its exit code again.
      ByteArrayOutputStream again = new ByteArrayOutputStream();
      assertThat(
              RunWatch.watch(
                  cli,
                  begun.runId(),
                  new PrintStream(again, true, StandardCharsets.UTF_8),
                  new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                  false))
          .isEqualTo(3);
      assertThat(again.toString(StandardCharsets.UTF_8)).isEqualTo("first\n");

      RunRecord ok = server.run(ExecutionRequest.of("print('fine')"));
      assertThat(
              RunWatch.watch(
                  cli,
                  ok.runId(),
                  new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                  new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                  false))
          .isZero();
      String alices = server.forTenant("alice").run(ExecutionRequest.of("1")).runId();
      assertThatThrownBy(() -> RunWatch.watch(cli, alices, System.out, System.err, false))
          .isInstanceOf(PysandboxException.class)
          .hasMessageContaining("no run with id");
    }
  }
}
