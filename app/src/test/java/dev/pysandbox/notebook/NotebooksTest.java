package dev.pysandbox.notebook;

import static dev.pysandbox.notebook.SystemPython.assertValidNotebook;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.api.RunRecord;
import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code .ipynb} of recorded runs: valid under nbformat's own validator, with outputs in the
 * order a reviewer reads them (stdout, stderr, displays, result, error) and the run's facts in
 * metadata.
 */
@Sandboxed
class NotebooksTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void ipynb_ofPlainOutput_isValidNbformat45WithOneStdoutStream() throws Exception {
    RunRecord run = RunFixtures.plain();
    String text = Notebooks.ipynb(run);
    assertValidNotebook(dir, text);
    assertThat(text).endsWith("}\n").contains("\n \"cells\": [");

    JsonNode nb = JSON.readTree(text);
    assertThat(nb.get("nbformat").asInt()).isEqualTo(4);
    assertThat(nb.get("nbformat_minor").asInt()).isEqualTo(5);
    assertThat(nb.at("/metadata/kernelspec/name").asText()).isEqualTo("python3");
    assertThat(nb.at("/metadata/language_info/version").asText()).isEqualTo("3.11.2");
    JsonNode meta = nb.at("/metadata/pysandbox");
    assertThat(meta.get("run_id").asText()).isEqualTo(run.runId());
    assertThat(meta.get("status").asText()).isEqualTo("succeeded");
    assertThat(meta.get("code_sha256").asText()).isEqualTo(run.codeHash());
    assertThat(meta.get("timeout_seconds").asInt()).isEqualTo(30);
    assertThat(meta.at("/limits/memory_mb").asInt()).isEqualTo(512);
    assertThat(meta.has("kill_reason")).as("nulls are left out").isFalse();

    JsonNode cells = nb.get("cells");
    assertThat(cells).hasSize(2);
    assertThat(cells.get(0).get("cell_type").asText()).isEqualTo("markdown");
    assertThat(joined(cells.get(0).get("source")))
        .startsWith("Say hello and add\n\n**run\\_00000000000000000001 — succeeded**");
    JsonNode code = cells.get(1);
    assertThat(code.get("execution_count").asInt()).isEqualTo(1);
    assertThat(code.at("/metadata/pysandbox/run_id").asText()).isEqualTo(run.runId());
    assertThat(code.at("/metadata/pysandbox/status").asText()).isEqualTo("succeeded");
    assertThat(strings(code.get("source"))).containsExactly("print('hello')\n", "print(1 + 2)\n");
    assertThat(outputTypes(code)).containsExactly("stream");
    assertThat(code.at("/outputs/0/name").asText()).isEqualTo("stdout");
    assertThat(joined(code.at("/outputs/0/text"))).isEqualTo("hello\n3\n");
    assertThat(ids(nb))
        .containsExactly("run_00000000000000000001-1-md", "run_00000000000000000001-1-code");
  }

  @Test
  void ipynb_ofAnException_endsWithAnErrorOutputCarryingTheTracebackLines() throws Exception {
    String text = Notebooks.ipynb(RunFixtures.zeroDivision("run_00000000000000000002"));
    assertValidNotebook(dir, text);

    JsonNode nb = JSON.readTree(text);
    JsonNode code = nb.get("cells").get(1);
    assertThat(outputTypes(code)).containsExactly("stream", "error");
    JsonNode error = code.at("/outputs/1");
    assertThat(error.get("ename").asText()).isEqualTo("ZeroDivisionError");
    assertThat(error.get("evalue").asText()).isEqualTo("division by zero");
    assertThat(strings(error.get("traceback")))
        .startsWith(
            "Traceback (most recent call last):", "  File \"<cell-1>\", line 3, in <module>")
        .endsWith("ZeroDivisionError: division by zero");
    assertThat(joined(nb.at("/cells/0/source")))
        .contains("⚠ failed**: ZeroDivisionError: division by zero");
  }

  @Test
  void ipynb_ofADataFrame_hasAnExecuteResultWithTextAndHtml() throws Exception {
    String text = Notebooks.ipynb(RunFixtures.dataFrame());
    assertValidNotebook(dir, text);

    JsonNode code = JSON.readTree(text).get("cells").get(1);
    assertThat(outputTypes(code)).containsExactly("execute_result");
    JsonNode result = code.at("/outputs/0");
    assertThat(result.get("execution_count").asInt()).isEqualTo(1);
    assertThat(result.at("/data/text~1plain").asText()).startsWith("   a  b\n0  1  3");
    assertThat(result.at("/data/text~1html").asText()).contains("<table");
  }

  @Test
  void ipynb_ofAMatplotlibFigure_hasADisplayWithThePngAsRecorded() throws Exception {
    RunRecord run = RunFixtures.figure();
    String text = Notebooks.ipynb(run);
    assertValidNotebook(dir, text);

    JsonNode code = JSON.readTree(text).get("cells").get(1);
    assertThat(outputTypes(code)).containsExactly("display_data");
    JsonNode display = code.at("/outputs/0");
    assertThat(display.get("metadata").isEmpty()).isTrue();
    String png = display.at("/data/image~1png").asText();
    assertThat(png).isEqualTo(run.displays().get(0).get("image/png"));
    assertThat(ImageIO.read(new ByteArrayInputStream(Base64.getDecoder().decode(png))).getWidth())
        .isEqualTo(2);
  }

  @Test
  void ipynb_ofATimeout_saysSoAsAnErrorAfterWhatWasPrinted() throws Exception {
    RunRecord run = RunFixtures.timedOut();
    String text = Notebooks.ipynb(run);
    assertValidNotebook(dir, text);

    JsonNode nb = JSON.readTree(text);
    JsonNode code = nb.get("cells").get(1);
    assertThat(outputTypes(code)).containsExactly("stream", "error");
    assertThat(code.at("/outputs/1/ename").asText()).isEqualTo("TimeoutError");
    assertThat(code.at("/outputs/1/evalue").asText()).isEqualTo(run.message());
    assertThat(nb.at("/metadata/pysandbox/kill_reason").asText()).isEqualTo("timeout");
    assertThat(nb.at("/metadata/pysandbox/exit_code").isMissingNode()).isTrue();
    assertThat(joined(nb.at("/cells/0/source")))
        .contains("⚠ timed out**: execution timed out after 5012 ms");
  }

  @Test
  void ipynb_ofASession_hasATitleThenEachRunNumberedWithTheFailedOneMarked() throws Exception {
    List<RunRecord> runs =
        List.of(
            RunFixtures.succeeded("run_0000000000000000000a", "x = 41\nprint(x)\n", "41\n").build(),
            RunFixtures.zeroDivision("run_0000000000000000000b"),
            RunFixtures.succeeded("run_0000000000000000000c", "print(x + 1)\n", "42\n")
                .description("Use x again")
                .build());
    String text = Notebooks.ipynb(runs, List.of(), "Exploring x");
    assertValidNotebook(dir, text);

    JsonNode nb = JSON.readTree(text);
    assertThat(nb.at("/metadata/title").asText()).isEqualTo("Exploring x");
    assertThat(nb.at("/metadata/pysandbox/session_id").asText()).isEqualTo("sess_0123456789ab");
    assertThat(strings(nb.at("/metadata/pysandbox/run_ids")))
        .containsExactly(
            "run_0000000000000000000a", "run_0000000000000000000b", "run_0000000000000000000c");
    JsonNode cells = nb.get("cells");
    assertThat(cells).hasSize(7);
    assertThat(joined(cells.get(0).get("source")))
        .startsWith("# Exploring x\n\nSession sess\\_0123456789ab · 3 runs · ⚠ 1 did not succeed");
    List<Integer> counts = new ArrayList<>();
    for (int i = 2; i < 7; i += 2) {
      counts.add(cells.get(i).get("execution_count").asInt());
      assertThat(cells.get(i).at("/metadata/pysandbox/run_id").asText())
          .isEqualTo(runs.get(i / 2 - 1).runId());
    }
    assertThat(counts).containsExactly(1, 2, 3);
    assertThat(joined(cells.get(3).get("source"))).contains("⚠ failed**: ZeroDivisionError");
    assertThat(joined(cells.get(1).get("source"))).doesNotContain("⚠");
    assertThat(joined(cells.get(5).get("source"))).startsWith("Use x again\n\n");
    assertThat(ids(nb)).doesNotHaveDuplicates().allMatch(id -> id.matches("[A-Za-z0-9_-]{1,64}"));
  }

  @Test
  void ipynb_ofARecordWithoutOutputsOrInterpreter_isValidAndHasNoOutputs() throws Exception {
    RunRecord run = RunRecord.builder().runId("run_00000000000000000009").code("pass").build();
    String text = Notebooks.ipynb(run);
    assertValidNotebook(dir, text);

    JsonNode nb = JSON.readTree(text);
    assertThat(nb.at("/metadata/language_info/version").isMissingNode()).isTrue();
    assertThat(nb.at("/cells/1/outputs")).isEmpty();
    assertThat(strings(nb.at("/cells/1/source"))).containsExactly("pass");
    assertThat(joined(nb.at("/cells/0/source"))).contains("unknown");
  }

  @Test
  void ipynb_keepsOnlyMimeTypesANotebookCanHold_andNotesTruncatedStdout() throws Exception {
    RunRecord run =
        RunFixtures.succeeded("run_0000000000000000000d", "display(obj)\n", "head\ntail\n")
            .stdoutTruncated(true)
            .stdoutBytes(5_000_000)
            .stderr("a warning\n")
            .displays(
                List.of(
                    Map.of("text/plain", "ok", "application/json", Map.of("a", 1)),
                    Map.of("not a mime", "x", "image/png", 42),
                    Map.of("text/html", List.of("<b>", "</b>"))))
            .result(Map.of("text/plain", "3", "extra", Map.of("x", 1)))
            .build();
    String text = Notebooks.ipynb(run);
    assertValidNotebook(dir, text);

    JsonNode code = JSON.readTree(text).at("/cells/1");
    assertThat(outputTypes(code))
        .containsExactly("stream", "stream", "display_data", "execute_result");
    assertThat(joined(code.at("/outputs/0/text")))
        .isEqualTo(
            "head\ntail\n[pysandbox: stdout truncated: 5000000 bytes were written; the head and the tail are kept]\n");
    assertThat(code.at("/outputs/1/name").asText()).isEqualTo("stderr");
    assertThat(code.at("/outputs/2/data/application~1json/a").asInt()).isEqualTo(1);
    assertThat(code.at("/outputs/3/data").size()).isEqualTo(1);
  }

  static String joined(JsonNode multiline) {
    if (multiline.isTextual()) {
      return multiline.asText();
    }
    return String.join("", strings(multiline));
  }

  static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static List<String> outputTypes(JsonNode codeCell) {
    List<String> out = new ArrayList<>();
    codeCell.get("outputs").forEach(o -> out.add(o.get("output_type").asText()));
    return out;
  }

  private static List<String> ids(JsonNode nb) {
    List<String> out = new ArrayList<>();
    nb.get("cells").forEach(c -> out.add(c.get("id").asText()));
    return out;
  }
}
