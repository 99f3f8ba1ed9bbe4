package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.SharedServiceTest;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The analyze_data prompt promises only formats that read (issue 23, item 15): in a real sandbox
 * with the interpreter as installed, a file of each format the description names is read by the
 * exact call the prompt gives, and each format it does not name fails for want of the package the
 * prompt tells the agent to ask for. Until then the description named Parquet (no pyarrow in
 * Debian) and .xlsx read only where openpyxl happened to be installed.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Sandboxed
class AnalyzeDataFormatsTest extends SharedServiceTest {
  /** How a run writes a small frame (a, b; two rows) in each readable format, with pandas. */
  private static final Map<String, String> WRITERS =
      Map.of(
          "CSV", "df.to_csv(path, index=False)",
          "TSV", "df.to_csv(path, sep='\\t', index=False)",
          "Excel (.xlsx)", "df.to_excel(path, index=False)",
          "JSON Lines", "df.to_json(path, orient='records', lines=True)",
          "JSON", "df.to_json(path, orient='records')");

  static Stream<Prompts.Format> readable() {
    return Prompts.FORMATS.stream().filter(Prompts.Format::readable);
  }

  static Stream<Prompts.Format> notReadable() {
    return Prompts.FORMATS.stream().filter(f -> !f.readable());
  }

  @Test
  void description_namesExactlyTheFormatsThatRead() {
    String description = Prompts.specs(ctx -> service).get(0).prompt().description();

    readable().forEach(f -> assertThat(description).contains(f.label()));
    notReadable().forEach(f -> assertThat(description).doesNotContain(f.label()));
    assertThat(description).doesNotContainIgnoringCase("parquet");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("readable")
  void aPromisedFormat_readsInARealSandboxWithThePromptsOwnCall(Prompts.Format format) {
    String file = "sample" + format.extensions().get(0);
    String call = Prompts.readerCall(file);
    assertThat(promptText(file)).contains("`import pandas as pd; df = " + call + "`");
    String code =
        "import pandas as pd\n"
            + "path = '/mnt/data/"
            + file
            + "'\n"
            + "df = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\n"
            + WRITERS.get(format.label())
            + "\n"
            + "df = "
            + call
            + "\n"
            + "print(df.shape, list(df.columns), df['a'].sum())";

    RunRecord r = service.run(new ExecutionRequest(code, null, format.label(), 60));

    assertThat(r.status())
        .as("%s: %s %s", file, r.error(), r.stderr())
        .isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("(2, 2) ['a', 'b'] 3\n");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("notReadable")
  void aFormatNotPromised_failsForThePackageThePromptSaysToAskFor(Prompts.Format format) {
    String file = "sample" + format.extensions().get(0);
    assertThat(promptText(file))
        .contains("packages [\"" + format.missingPackage() + "\"]", "as CSV");
    // An OLE2 header: pandas reads the format from the bytes (an .xls), or needs the engine first.
    String code =
        "import pandas as pd\n"
            + "open('/mnt/data/"
            + file
            + "', 'wb').write(bytes.fromhex('d0cf11e0a1b11ae1') + bytes(504))\n"
            + "df = "
            + Prompts.readerCall(file);

    RunRecord r = service.run(new ExecutionRequest(code, null, format.label(), 60));

    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.error().name()).isEqualTo("ImportError");
    assertThat(r.error().value()).contains(format.missingPackage());
  }

  private static String promptText(String file) {
    return ((McpSchema.TextContent) Prompts.analyzeData(file).messages().get(0).content()).text();
  }
}
