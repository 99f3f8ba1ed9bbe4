package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * analyzer.py run directly by the host's Python, without a sandbox: the whole corpus (the same file
 * {@link CodeAnalysisTest} runs through the server), that analysing never executes the code, and
 * that hostile input is answered within the analyser's budget. Fast feedback on the rules; the
 * sandboxed path is CodeAnalysisTest's.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class AnalyzerScriptTest {
  private static final Path RESOURCES = Path.of("app/src/test/resources/dev/pysandbox/core");

  @Test
  void analyzer_onTheCorpusAndHostileInput_flagsEveryRiskyCaseAndNoCleanOneAndNeverRaises()
      throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(
                "/usr/bin/python3",
                "-I",
                "-B", // no __pycache__ next to the sources
                RESOURCES.resolve("check_analyzer.py").toString(),
                Path.of("sandbox/src/main/resources/dev/pysandbox/worker/analyzer.py").toString(),
                RESOURCES.resolve("analysis-corpus.json").toString())
            .redirectErrorStream(true)
            .start();
    String out;
    try {
      out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(50, TimeUnit.SECONDS)).isTrue();
    } finally {
      p.destroyForcibly();
    }
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).endsWith("0 failures\n");
  }
}
