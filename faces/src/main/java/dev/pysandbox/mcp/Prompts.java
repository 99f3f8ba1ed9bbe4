package dev.pysandbox.mcp;

import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpServerFeatures.SyncPromptSpecification;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Two prompts that help an agent start well: {@code analyze_data} (a data file: upload, inspect
 * with pandas, summarise, plot) and {@code explain_run} (a run of the caller's tenant, with its
 * code, status, output tails and error, to explain or fix). A missing argument, or a run the caller
 * cannot see, is answered with {@code -32602}, the latter exactly as for a run that does not exist.
 */
final class Prompts {
  /** Characters of stdout, stderr and traceback an explain_run prompt carries (their tails). */
  static final int TAIL_CHARS = 4_000;

  /** Characters of code an explain_run prompt carries (its head). */
  static final int CODE_CHARS = 20_000;

  /**
   * A data format analyze_data knows: its file extensions, the pandas call that reads a file of it
   * ({@code %s} is the quoted path), and the package that call needs when the stock sandbox
   * (scripts/setup.sh, the container image) does not have it, else null. Only formats that read
   * with what is installed are named in the prompt's description (AnalyzeDataFormatsTest reads each
   * in a real sandbox with the prompt's own call, and checks that every other one fails for want of
   * its package), so the prompt never promises what cannot be read.
   */
  record Format(String label, List<String> extensions, String call, String missingPackage) {
    boolean readable() {
      return missingPackage == null;
    }

    boolean matches(String lowerName) {
      return extensions.stream().anyMatch(lowerName::endsWith);
    }
  }

  /** Most specific first: {@code .jsonl} before {@code .json}. The rest reads as CSV. */
  static final List<Format> FORMATS =
      List.of(
          new Format("CSV", List.of(".csv"), "pd.read_csv(%s)", null),
          new Format("TSV", List.of(".tsv", ".tab"), "pd.read_csv(%s, sep=\"\\t\")", null),
          new Format("Excel (.xlsx)", List.of(".xlsx", ".xlsm"), "pd.read_excel(%s)", null),
          new Format(
              "JSON Lines", List.of(".jsonl", ".ndjson"), "pd.read_json(%s, lines=True)", null),
          new Format("JSON", List.of(".json"), "pd.read_json(%s)", null),
          // pandas reads .xls only with xlrd >= 2.0.1; Debian bookworm has 1.2.0.
          new Format("Excel 97 (.xls)", List.of(".xls"), "pd.read_excel(%s)", "xlrd"),
          // pyarrow (or fastparquet) is not packaged by Debian bookworm.
          new Format("Parquet", List.of(".parquet"), "pd.read_parquet(%s)", "pyarrow"),
          new Format("Feather", List.of(".feather"), "pd.read_feather(%s)", "pyarrow"));

  private Prompts() {}

  static List<SyncPromptSpecification> specs(
      Function<McpTransportContext, SandboxService> services) {
    return List.of(
        new SyncPromptSpecification(
            McpSchema.Prompt.builder("analyze_data")
                .title("Analyze a data file")
                .description(
                    "Load a data file ("
                        + String.join(
                            ", ",
                            FORMATS.stream().filter(Format::readable).map(Format::label).toList())
                        + ") into a pysandbox session with pandas, inspect it, summarise it and"
                        + " plot what matters.")
                .arguments(
                    List.of(
                        McpSchema.PromptArgument.builder("filename")
                            .title("File name")
                            .description(
                                "The data file's name, e.g. sales.csv (uploaded with upload_file,"
                                    + " or already in the session's /mnt/data)")
                            .required(true)
                            .build()))
                .build(),
            (exchange, request) -> analyzeData(argument(request, "filename"))),
        new SyncPromptSpecification(
            McpSchema.Prompt.builder("explain_run")
                .title("Explain a run")
                .description(
                    "Explain what a pysandbox run did and, when it failed, why and how to fix it:"
                        + " the prompt carries the run's code, status, output and error.")
                .arguments(
                    List.of(
                        McpSchema.PromptArgument.builder("run_id")
                            .title("Run id")
                            .description("The run to explain (run_… from run_python or list_runs)")
                            .required(true)
                            .build()))
                .build(),
            (exchange, request) ->
                explainRun(
                    services.apply(exchange.transportContext()), argument(request, "run_id"))));
  }

  static McpSchema.GetPromptResult analyzeData(String filename) {
    if (filename.length() > 255 || filename.chars().anyMatch(Character::isISOControl)) {
      throw invalid("analyze_data: \"filename\" must be a file name of at most 255 characters");
    }
    Format format = formatOf(filename);
    String load = "`import pandas as pd; df = " + readerCall(filename) + "`";
    String session =
        format.readable()
            ? "use session_id \"analysis\" (create_session, or just name it)"
            : "create it first with create_session (session_id \"analysis\", packages [\""
                + format.missingPackage()
                + "\"]): reading "
                + format.label()
                + " needs "
                + format.missingPackage()
                + ", which this server's standard Python lacks, and the server installs it into"
                + " the session's environment (if that fails, ask for the data as CSV instead)";
    String text =
        "Analyze the data file `"
            + filename
            + "` with pysandbox's tools.\n\n"
            + "1. Work in one session so that variables persist: "
            + session
            + ". If the file is not in the session yet,"
            + " upload it with upload_file (session_id \"analysis\", filename `"
            + filename
            + "`); list_artifacts shows what is there.\n"
            + "2. Load it with run_python in that session: "
            + load
            + ". Then look at it: `df.shape`, `df.dtypes`, `df.head()`, `df.isna().sum()`,"
            + " `df.describe(include=\"all\")`.\n"
            + "3. Summarise what the data holds: its size, the meaning and type of each column,"
            + " missing or odd values, and the notable distributions, trends or relations.\n"
            + "4. Plot what matters with matplotlib (one figure per question; call plt.show()):"
            + " the figures come back as images.\n"
            + "5. Keep each call small and build on the session's variables; when a run fails,"
            + " read its error and traceback, fix the code and run it again.\n\n"
            + "End with a short written summary of the findings and the figures that support them.";
    return McpSchema.GetPromptResult.builder(List.of(message(text)))
        .description("Analyze " + filename + " with pandas in a pysandbox session")
        .build();
  }

  /** The format of a file by its extension; CSV when none matches. */
  static Format formatOf(String filename) {
    String lower = filename.toLowerCase(Locale.ROOT);
    return FORMATS.stream().filter(f -> f.matches(lower)).findFirst().orElse(FORMATS.get(0));
  }

  /** The pandas call that reads a file in /mnt/data, by its extension. */
  static String readerCall(String filename) {
    String path = "/mnt/data/" + filename;
    String quoted = "\"" + path.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    return String.format(Locale.ROOT, formatOf(filename).call(), quoted);
  }

  static McpSchema.GetPromptResult explainRun(SandboxService service, String runId) {
    RunRecord run;
    try {
      run = service.getRun(runId, true);
    } catch (PysandboxException e) {
      throw RunResources.error(
          McpSchema.ErrorCodes.INVALID_PARAMS, e.code(), "explain_run: " + e.getMessage());
    }
    StringBuilder text = new StringBuilder();
    text.append("Explain what this pysandbox run did")
        .append(
            run.status() == RunStatus.SUCCEEDED
                ? "."
                : ", why it ended as it did, and how to fix the code.")
        .append(" Quote the lines that matter; if you propose a fix, give the corrected code")
        .append(" and say what to check when it runs again (run_python).\n\n");
    text.append("Run ").append(run.runId());
    if (run.sessionId() != null) {
      text.append(" in session ").append(run.sessionId());
    }
    text.append("\nStatus: ").append(run.status());
    if (run.message() != null) {
      text.append(" — ").append(run.message());
    }
    if (run.exitCode() != null) {
      text.append("\nExit code: ").append(run.exitCode());
    }
    if (run.durationMs() != null) {
      text.append("\nDuration: ").append(run.durationMs()).append(" ms");
    }
    section(text, "Code", "python", head(run.code()));
    section(text, "stdout (its end)", "", tail(run.stdout()));
    section(text, "stderr (its end)", "", tail(run.stderr()));
    ErrorInfo error = run.error();
    if (error != null) {
      text.append("\n\nError: ").append(error.name()).append(": ").append(error.value());
      section(text, "Traceback (its end)", "", tail(error.traceback()));
    }
    return McpSchema.GetPromptResult.builder(List.of(message(text.toString())))
        .description("Explain run " + run.runId() + " (" + run.status() + ")")
        .build();
  }

  private static void section(StringBuilder text, String title, String lang, String body) {
    if (body == null || body.isEmpty()) {
      return;
    }
    text.append("\n\n").append(title).append(":\n```").append(lang).append('\n').append(body);
    if (!body.endsWith("\n")) {
      text.append('\n');
    }
    text.append("```");
  }

  private static String head(String s) {
    if (s == null || s.length() <= CODE_CHARS) {
      return s;
    }
    return s.substring(0, CODE_CHARS) + "\n[… " + (s.length() - CODE_CHARS) + " more characters]";
  }

  private static String tail(String s) {
    if (s == null || s.length() <= TAIL_CHARS) {
      return s;
    }
    return "[… "
        + (s.length() - TAIL_CHARS)
        + " characters before]\n"
        + s.substring(s.length() - TAIL_CHARS);
  }

  private static McpSchema.PromptMessage message(String text) {
    return new McpSchema.PromptMessage(
        McpSchema.Role.USER, McpSchema.TextContent.builder(text).build());
  }

  private static String argument(McpSchema.GetPromptRequest request, String name) {
    Object value = request.arguments() == null ? null : request.arguments().get(name);
    if (!(value instanceof String s) || s.isBlank()) {
      throw invalid(request.name() + " needs the argument \"" + name + "\" (a string)");
    }
    return s.strip();
  }

  private static McpError invalid(String message) {
    return RunResources.invalidParams("Invalid params: " + message);
  }
}
