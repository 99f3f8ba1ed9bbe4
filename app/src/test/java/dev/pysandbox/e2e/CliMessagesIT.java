package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the command line says where it said the wrong thing (issue 23, item 16): {@code runs open}
 * named {@code marimo edit} where marimo is not installed, and a command after a server was killed
 * printed the next server's housekeeping warnings on the person's terminal.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class CliMessagesIT {
  @TempDir Path dataDir;
  @TempDir Path bin;

  @Test
  void runsOpen_withNeitherMarimoNorJupyter_printsTheNotebooksPath_andNamesNoProgram()
      throws Exception {
    String runId = runOnce("print(1)");
    // PATH as a machine without either has it (java and python3 are in /usr/bin).
    Map<String, String> bare = Map.of("PATH", bin + ":/usr/bin:/bin");

    ServerProcess.Result open =
        ServerProcess.runWith(null, dataDir, bare, null, "runs", "open", runId);
    ServerProcess.Result exec =
        ServerProcess.runWith(null, dataDir, bare, null, "runs", "open", "--exec", runId);

    assertThat(open.exit()).isZero();
    assertThat(open.stdout().strip()).endsWith(runId + "/notebook.ipynb").doesNotContain("marimo");
    assertThat(open.stderr())
        .contains("neither marimo nor jupyter is on PATH", "notebook.py", "pip install marimo");
    assertThat(exec.exit()).isEqualTo(1);
    assertThat(exec.stdout()).isEmpty();

    Path jupyter = bin.resolve("jupyter");
    Files.writeString(jupyter, "#!/bin/sh\nexit 0\n");
    Files.setPosixFilePermissions(jupyter, PosixFilePermissions.fromString("rwxr-xr-x"));
    ServerProcess.Result withJupyter =
        ServerProcess.runWith(null, dataDir, bare, null, "runs", "open", runId);
    assertThat(withJupyter.stdout()).startsWith("jupyter notebook /").contains(runId);
  }

  @Test
  void aCommandAfterAKilledServer_printsNoHousekeepingReport_unlessAskedForInfo() throws Exception {
    killMidRun();
    ServerProcess.Result quiet = ServerProcess.run(dataDir, null, "run", "-c", "print(2)");

    assertThat(quiet.exit()).isZero();
    assertThat(quiet.stderr()).doesNotContain("stopped servers").doesNotContain("WARN");
    // The clean-up still happened: the killed server's run is recorded as interrupted.
    assertThat(ServerProcess.run(dataDir, null, "runs", "list").stdout()).contains("interrupted");

    killMidRun();
    ServerProcess.Result verbose =
        ServerProcess.run(dataDir, null, "run", "--set", "log_level=info", "-c", "print(3)");
    assertThat(verbose.stderr()).contains("marked 1 runs of stopped servers as interrupted");
  }

  /** A {@code pysandbox run} killed (SIGKILL) while its code runs. */
  private void killMidRun() throws Exception {
    Process p =
        new ProcessBuilder(
                TestServices.launcher().toString(),
                "run",
                "--follow", // "go" as it is printed (not a terminal: else at the end)
                "--data-dir",
                dataDir.toString(),
                "-c",
                "import time\nprint('go', flush=True)\ntime.sleep(300)")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(out.readLine()).isEqualTo("go");
      p.destroyForcibly(); // bin/pysandbox execs java: this is the server itself
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  private String runOnce(String code) throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "run", "-c", code);
    assertThat(r.exit()).as(r.stderr()).isZero();
    List<String> words = List.of(r.stderr().split("\\s+"));
    return words.stream().filter(w -> w.matches("run_[0-9a-f]{20}")).findFirst().orElseThrow();
  }
}
