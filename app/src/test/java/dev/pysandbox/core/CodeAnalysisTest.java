package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.analysis.CodeAnalysis;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * validate_code and run_python(dry_run) on a real core: the analysis in its own real sandbox, the
 * corpus of risky code (every rule, every disguise) and of clean code, syntax errors, counts,
 * hostile input, a killed analysis sandbox, and that neither records a run nor uses a sandbox of
 * its own.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Sandboxed
class CodeAnalysisTest {
  Path dataDir;
  DefaultSandboxService service;

  @BeforeAll
  void start(@TempDir Path dir) {
    dataDir = dir;
    service =
        TestServices.start(
            // No pool: no sandbox starts in the background while a test counts workspaces.
            dataDir, Map.of("code_max_bytes", "2000000", "max_sessions", "1", "pool_size", "0"));
  }

  @AfterAll
  void stop() {
    service.close();
  }

  static JsonNode corpus() throws IOException {
    try (InputStream in = CodeAnalysisTest.class.getResourceAsStream("analysis-corpus.json")) {
      return Json.mapper().readTree(in);
    }
  }

  static Stream<Arguments> risky() throws IOException {
    List<Arguments> cases = new ArrayList<>();
    for (JsonNode c : corpus().path("risky")) {
      cases.add(
          Arguments.of(
              c.path("name").asText(),
              c.path("code").asText(),
              c.path("rule").asText(),
              c.path("min_severity").asText()));
    }
    return cases.stream();
  }

  static Stream<Arguments> clean() throws IOException {
    List<Arguments> cases = new ArrayList<>();
    for (JsonNode c : corpus().path("clean")) {
      cases.add(Arguments.of(c.path("name").asText(), c.path("code").asText()));
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("risky")
  void validate_riskyCode_isFlaggedByItsRuleAtItsSeverityOrAbove(
      String name, String code, String rule, String minSeverity) {
    ValidationReport r = service.validateCode(code);

    assertThat(r.riskFindings())
        .as(name + ": " + r.riskFindings())
        .anySatisfy(
            f -> {
              assertThat(f.rule()).isEqualTo(rule);
              assertThat(f.atLeast(minSeverity)).isTrue();
            });
    assertThat(r.maxSeverity()).isEqualTo(r.riskFindings().get(0).severity());
    for (RiskFinding f : r.riskFindings()) {
      assertThat(RiskFinding.SEVERITIES).contains(f.severity());
      assertThat(f.message()).isNotBlank();
      if (f.line() != null) {
        assertThat(f.column()).as(f.toString()).isNotNull().isPositive();
        assertThat(f.snippet()).as(f.toString()).isNotNull().hasSizeLessThanOrEqualTo(200);
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("clean")
  void validate_cleanCode_isValidWithNoFindingAtHighOrAbove(String name, String code) {
    ValidationReport r = service.validateCode(code);

    assertThat(r.valid()).as(name + ": " + r.syntaxErrors()).isTrue();
    assertThat(r.riskFindings()).as(name).noneMatch(f -> f.atLeast("high"));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "return 1|1|1|'return' outside function",
        "x = 1\\nyield x|2|1|'yield' outside function",
        "import asyncio\\nawait asyncio.sleep(0)|2|1|'await' outside function",
        "def f():\\n    await g()|2|5|'await' outside async function",
        "async def f():\\n    pass\\ndef g():\\n    async with f():\\n        pass|4|5|'async with'"
            + " outside async function",
        "print((1, 2)|1|6|'(' was never closed",
        "é = 1; return 1|1|8|'return' outside function",
        "if x:\\npass|2|1|expected an indented block"
      })
  void validate_syntaxError_isInvalidWithLineCharacterColumnAndPythonsMessage(
      String code, int line, int column, String message) {
    ValidationReport r = service.validateCode(code.replace("\\n", "\n"));

    assertThat(r.valid()).isFalse();
    assertThat(r.syntaxErrors()).hasSize(1);
    assertThat(r.syntaxErrors().get(0).line()).isEqualTo(line);
    assertThat(r.syntaxErrors().get(0).column()).isEqualTo(column);
    assertThat(r.syntaxErrors().get(0).message()).startsWith(message);
  }

  @Test
  void validate_topLevelAwait_isInvalidAsAModule_thoughTheRunnerRunsItAsJupyterDoes() {
    assertThat(service.validateCode("import asyncio\nawait asyncio.sleep(0)").valid()).isFalse();
    assertThat(service.run(ExecutionRequest.of("import asyncio\nawait asyncio.sleep(0)")).status())
        .isEqualTo(RunStatus.SUCCEEDED);
  }

  /** Issue 24 item 13: code that reads differently from how it runs ("Trojan Source"). */
  @Test
  void validate_bidiControlCharacters_areAHighFinding_withTheSnippetEscaped() {
    String code =
        "access = 'user'\n"
            + "if access != 'user\u202e \u2066# admin\u2069 \u2066':\n"
            + "    print('admin')\n";
    ValidationReport r = service.validateCode(code);
    assertThat(r.riskFindings())
        .anySatisfy(
            f -> {
              assertThat(f.rule()).isEqualTo("bidi_control");
              assertThat(f.severity()).isEqualTo("high");
              assertThat(f.line()).isEqualTo(2);
              assertThat(f.message()).contains("4 bidirectional control characters");
              assertThat(f.snippet()).contains("\\u202e").doesNotContain("\u202e");
            });
    assertThat(service.validateCode("print('שלום')").riskFindings()).isEmpty();
  }

  @Test
  void validate_invalidCodeTheParserAccepts_stillReportsFindings() {
    ValidationReport r = service.validateCode("import os\nos.system('id')\nreturn 1");

    assertThat(r.valid()).isFalse();
    assertThat(r.riskFindings())
        .anySatisfy(f -> assertThat(f.rule()).isEqualTo("process_execution"));
  }

  @Test
  void validate_countsLinesFunctionsAndImports_andTimesTheAnalysis() {
    String code =
        "import math\nfrom os import path\n\ndef f(x):\n    return x\n\n"
            + "async def g():\n    def h():\n        pass\n\nlam = lambda y: y\nimport json\n";
    ValidationReport r = service.validateCode(code);

    assertThat(r.lines()).isEqualTo(12);
    assertThat(r.functions()).isEqualTo(3);
    assertThat(r.imports()).isEqualTo(3);
    assertThat(r.analysisMs()).isPositive().isLessThan(5_000);
    assertThat(r.riskFindings()).isEmpty();
    assertThat(r.maxSeverity()).isNull();
  }

  @Test
  void finding_pointsAtTheLineAndCharacterColumnWithTheStrippedLineAsSnippet() {
    ValidationReport r = service.validateCode("x = 1\n    \nnom = 'é'; import subprocess as sp\n");

    RiskFinding f = r.riskFindings().get(0);
    assertThat(f.rule()).isEqualTo("process_execution");
    assertThat(f.severity()).isEqualTo("high");
    assertThat(f.line()).isEqualTo(3);
    assertThat(f.column()).isEqualTo(12); // characters, not UTF-8 bytes (13)
    assertThat(f.snippet()).isEqualTo("nom = 'é'; import subprocess as sp");
  }

  @Test
  void validate_hundredThousandNestedParentheses_answersAtOnceAndTheAnalysisGoesOn() {
    // At once: the parser's own depth limit answers (a hang would be the class's timeout).
    ValidationReport r = service.validateCode("(".repeat(100_000) + ")".repeat(100_000));

    assertThat(r.valid()).isFalse();
    assertThat(r.syntaxErrors().get(0).message()).contains("too many nested parentheses");
    assertThat(service.validateCode("import os\nos.system('id')").maxSeverity())
        .isEqualTo("critical");
  }

  @Test
  void validate_expressionsNestedBeyondThePythonCompiler_areTooComplexAndFlaggedHigh() {
    ValidationReport r = service.validateCode("x = " + "-".repeat(100_000) + "1");

    assertThat(r.valid()).isFalse();
    assertThat(r.syntaxErrors().get(0).message()).startsWith("too complex to compile");
    assertThat(r.riskFindings())
        .anySatisfy(
            f -> {
              assertThat(f.rule()).isEqualTo("analysis_incomplete");
              assertThat(f.severity()).isEqualTo("high");
            });
    assertThat(service.validateCode("print(1)").valid()).isTrue();
  }

  @Test
  void validate_oneMegabyteStringLiteral_answersWithinTheBoundAndTheAnalysisGoesOn() {
    ValidationReport r = service.validateCode("x = '" + "a".repeat(1_000_000) + "'\nprint(len(x))");

    assertThat(r.valid()).isTrue();
    assertThat(r.riskFindings()).isEmpty();
    assertThat(service.validateCode("eval(input())").maxSeverity()).isEqualTo("critical");
  }

  @Test
  void validate_tooLargeOrEmptyCode_isRefusedBeforeAnyAnalysis() {
    assertThatThrownBy(() -> service.validateCode("x".repeat(2_000_001)))
        .isInstanceOf(PysandboxException.class)
        .extracting(e -> ((PysandboxException) e).code())
        .isEqualTo(ErrorCode.CODE_TOO_LARGE);
    assertThatThrownBy(() -> service.validateCode("  "))
        .isInstanceOf(PysandboxException.class)
        .extracting(e -> ((PysandboxException) e).code())
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void analysisSandbox_killedFromOutside_isReplacedByTheNextAnalysis() throws Exception {
    service.validateCode("print(1)");
    CodeAnalysis analysis = service.core().analysis;
    Sandbox first = analysis.sandbox();
    assertThat(first).isNotNull();

    first.kill("test").join();
    Await.until("the killed runner gone", () -> first.worker().isOpen(), open -> !open);
    ValidationReport r = service.validateCode("import os\nos.system('id')");

    assertThat(r.maxSeverity()).isEqualTo("critical");
    assertThat(analysis.sandbox()).isNotNull().isNotSameAs(first);
  }

  @Test
  void validate_fromManyThreadsAtOnce_answersEveryCallerItsOwnReport() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(8);
    try {
      List<Future<ValidationReport>> answers = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        String code = i % 2 == 0 ? "x = " + i + "\nprint(x)" : "import os\nos.system('" + i + "')";
        answers.add(threads.submit(() -> service.validateCode(code)));
      }
      for (int i = 0; i < answers.size(); i++) {
        ValidationReport r = answers.get(i).get(60, TimeUnit.SECONDS);
        if (i % 2 == 0) {
          assertThat(r.riskFindings()).isEmpty();
        } else {
          assertThat(r.riskFindings().get(0).message()).endsWith("(" + i + ")");
        }
      }
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void analysisSandbox_isNoSession_andDoesNotCountAgainstMaxSessions() {
    service.validateCode("print(1)");

    assertThat(service.listSessions()).isEmpty();
    // max_sessions is 1 here: the analysis sandbox leaves room for it.
    service.createSession("analysis-room", null);
    try {
      assertThat(service.listSessions()).hasSize(1);
    } finally {
      service.closeSession("analysis-room");
    }
  }

  @Test
  void validateAndDryRun_recordNoRun_openNoSession_andStartNoSandbox() throws IOException {
    service.validateCode("print(1)"); // the analysis sandbox exists from here on
    long runs = service.listRuns(new RunQuery(1, 0, null, null)).total();
    Set<String> workspaces = workspaces();

    ValidationReport v = service.validateCode("import os\nos.system('id')");
    RunRecord dry =
        service.run(
            new ExecutionRequest(
                "import subprocess\nsubprocess.run(['id'])\nprint(1)",
                "dry-session",
                "looking only",
                null,
                null,
                null,
                true,
                List.of()),
            RunListener.NONE);
    RunRecord started =
        service.start(
            new ExecutionRequest("print(1)", null, null, null, null, null, true, List.of()),
            RunListener.NONE);

    assertThat(v.maxSeverity()).isEqualTo("critical");
    assertThat(dry.runId()).isNull();
    assertThat(dry.status()).isEqualTo(RunStatus.DRY_RUN);
    assertThat(dry.sessionId()).isEqualTo("dry-session");
    assertThat(dry.description()).isEqualTo("looking only");
    assertThat(dry.codeHash()).hasSize(64);
    assertThat(dry.createdAt()).isNotNull();
    assertThat(dry.stdout()).isNull();
    assertThat(dry.riskFindings())
        .anySatisfy(f -> assertThat(f.rule()).isEqualTo("process_execution"));
    assertThat(dry.message())
        .isEqualTo("dry run: valid, 2 findings (highest: critical); nothing ran");
    assertThat(started.status()).isEqualTo(RunStatus.DRY_RUN);
    assertThat(started.message()).isEqualTo("dry run: valid, no findings; nothing ran");
    assertThat(service.listRuns(new RunQuery(1, 0, null, null)).total()).isEqualTo(runs);
    assertThat(service.listSessions()).isEmpty();
    assertThat(workspaces()).isSubsetOf(workspaces);
  }

  @Test
  void dryRun_ofCodeThatDoesNotCompile_hasTheSyntaxErrorAsItsError() {
    RunRecord dry =
        service.run(
            new ExecutionRequest("x = 1\nreturn x", null, null, null, null, null, true, List.of()),
            RunListener.NONE);

    assertThat(dry.status()).isEqualTo(RunStatus.DRY_RUN);
    assertThat(dry.error().name()).isEqualTo("SyntaxError");
    assertThat(dry.error().value()).isEqualTo("'return' outside function");
    assertThat(dry.error().traceback()).isEqualTo("line 2, column 1: 'return' outside function");
    assertThat(dry.message())
        .isEqualTo(
            "dry run: not valid (line 2, column 1: 'return' outside function), no findings;"
                + " nothing ran");
  }

  /** The workspaces on disk: every sandbox started has one, pooled or not. */
  private Set<String> workspaces() throws IOException {
    try (Stream<Path> s = Files.list(new DataLayout(dataDir).workspacesDir())) {
      return s.map(p -> p.getFileName().toString()).collect(TreeSet::new, Set::add, Set::addAll);
    }
  }
}
