package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.SharedServiceTest;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.ValidationReport;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * IPython's {@code !command} and {@code %magic} lines are not Python (issue 23, item 16): a run in
 * a real sandbox answers a SyntaxError that says so and what to do instead ({@code packages} for
 * pip, Python for a shell command, nothing for {@code %matplotlib inline}), and validate_code says
 * the same. They were a bare "invalid syntax".
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class NotPythonLinesTest extends SharedServiceTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "!pip install seaborn|1|packages argument of run_python or create_session|[\"seaborn\"]",
        "import os\\n%pip install -q pandas>=2|2|packages argument|[\"pandas>=2\"]",
        "!ls -la /mnt/data|1|shell escape|os.listdir",
        "%matplotlib inline\\nimport matplotlib|1|remove it|figures come back as images",
        "%%time\\nx = 1|1|IPython magic|remove it"
      })
  void aRunWithAShellEscapeOrMagic_failsWithASyntaxErrorThatSaysWhatToDoInstead(
      String code, int line, String says, String alsoSays) {
    String source = code.replace("\\n", "\n");

    RunRecord r = service.run(ExecutionRequest.of(source));
    ValidationReport v = service.validateCode(source);

    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.error().name()).isEqualTo("SyntaxError");
    assertThat(r.error().value()).contains("not", says, alsoSays);
    assertThat(r.error().traceback()).contains("line " + line);
    assertThat(v.valid()).isFalse();
    assertThat(v.syntaxErrors().get(0).line()).isEqualTo(line);
    assertThat(r.error().value()).startsWith(v.syntaxErrors().get(0).message());
  }

  @Test
  void otherSyntaxErrors_keepPythonsOwnMessage() {
    RunRecord r = service.run(ExecutionRequest.of("x = (1 +\n% 2"));

    assertThat(r.error().name()).isEqualTo("SyntaxError");
    assertThat(r.error().value()).doesNotContain("IPython");
    assertThat(service.run(ExecutionRequest.of("x = (10\n% 3)\nx")).status())
        .isEqualTo(RunStatus.SUCCEEDED);
  }
}
