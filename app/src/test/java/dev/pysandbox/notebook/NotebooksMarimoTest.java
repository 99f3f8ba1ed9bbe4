package dev.pysandbox.notebook;

import static dev.pysandbox.notebook.SystemPython.assertCompiles;
import static dev.pysandbox.notebook.SystemPython.stdoutOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The marimo {@code .py} of recorded runs, run by plain {@code python3 -I} (no marimo installed):
 * it prints what the runs printed, runs a session's cells in one namespace, and survives code that
 * is not Python.
 */
@Sandboxed
class NotebooksMarimoTest {
  @TempDir Path dir;

  @Test
  void py_ofPlainPrints_printsExactlyTheRunsStdout() throws Exception {
    RunRecord run = RunFixtures.plain();
    SystemPython.Result r = runPy(Notebooks.marimo(run));
    assertThat(r.stdout()).isEqualTo(run.stdout());
    assertThat(r.stderr()).isEmpty();
    assertThat(r.exit()).isZero();
  }

  @Test
  void py_keepsMultiLineStringsWithBlankAndWhitespaceOnlyLinesExact() throws Exception {
    String code =
        "text = \"\"\"first\n\n   \n\t\n  indented\r\nlast \"\"\"\n"
            + "print(repr(text))\n"
            + "\n"
            + "def f():\n"
            + "    '''doc\n"
            + "\n"
            + "    '''\n"
            + "    return f.__doc__\n"
            + "print(repr(f()))";
    String stdout = stdoutOf(dir, code);
    assertThat(stdout).contains("'first\\n\\n   \\n\\t\\n  indented\\nlast '");
    RunRecord run = RunFixtures.succeeded("run_0000000000000000000e", code, stdout).build();

    String py = Notebooks.marimo(run);
    assertThat(py)
        .contains("\n    text = \"\"\"first\n\n       \n    \t\n      indented\n    last \"\"\"\n");
    assertThat(runPy(py).stdout()).isEqualTo(stdout);
  }

  @Test
  void py_ofASession_runsTheCellsInOneNamespaceInOrder() throws Exception {
    List<RunRecord> runs =
        List.of(
            RunFixtures.succeeded(
                    "run_0000000000000000001a", "x = 41\nprint('x is', x)\n", "x is 41\n")
                .build(),
            RunFixtures.succeeded(
                    "run_0000000000000000001b", "x = x + 1\nprint('now', x)\n", "now 42\n")
                .build(),
            RunFixtures.succeeded(
                    "run_0000000000000000001c",
                    "class Point:\n    pass\nimport pickle\nprint(x * 2, len(pickle.dumps(Point())) > 0)\n",
                    "84 True\n")
                .build());
    SystemPython.Result r = runPy(Notebooks.marimo(runs, List.of(), "Counting"));
    assertThat(r.stdout()).isEqualTo("x is 41\nnow 42\n84 True\n");
    assertThat(r.stderr()).isEmpty();
    assertThat(r.exit()).isZero();
  }

  @Test
  void py_withASyntaxErrorRun_keepsItAsTextAndRunsTheRest() throws Exception {
    List<RunRecord> runs =
        List.of(
            RunFixtures.succeeded("run_0000000000000000002a", "print('one')\n", "one\n").build(),
            RunFixtures.syntaxError("run_0000000000000000002b"),
            RunFixtures.succeeded("run_0000000000000000002c", "print('three')\n", "three\n")
                .build());
    String py = Notebooks.marimo(runs, List.of(), null);
    assertThat(py)
        .contains("app._unparsable_cell(\n    \"print('a'\\nprint('b')\\n\",\n    name=\"_\",\n)");

    Path file = write(py);
    assertCompiles(file);
    SystemPython.Result r = SystemPython.run(dir, null, "-I", file.toString());
    assertThat(r.stdout()).isEqualTo("one\nthree\n");
    assertThat(r.stderr()).contains("not valid Python as a cell");
    assertThat(r.exit()).isZero();
  }

  @Test
  void py_ofCodeThatOnlyCompilesAsAModule_staysParsable() throws Exception {
    List<RunRecord> runs =
        List.of(
            RunFixtures.succeeded(
                    "run_0000000000000000003a", "from math import *\nprint(floor(2.5))\n", "2\n")
                .build(),
            RunFixtures.succeeded(
                    "run_0000000000000000003b",
                    "import asyncio\nawait asyncio.sleep(0)\nprint('awaited')\n",
                    "awaited\n")
                .build(),
            // Never compiled (awaiting approval): not known to be Python at all.
            RunRecord.builder()
                .runId("run_0000000000000000003c")
                .status(RunStatus.AWAITING_APPROVAL)
                .code("return 1\n\"\"\"unterminated")
                .build(),
            // A SyntaxError the code raised while running is not a compile failure.
            RunFixtures.succeeded(
                    "run_0000000000000000003d",
                    "print('ran')\ncompile('(', 'x', 'exec')\n",
                    "ran\n")
                .status(RunStatus.FAILED)
                .error(
                    new ErrorInfo(
                        "SyntaxError",
                        "'(' was never closed",
                        "Traceback (most recent call last):\n  File \"<cell-4>\", line 2, in <module>\n"
                            + "  File \"x\", line 1\n    (\n    ^\nSyntaxError: '(' was never closed\n"))
                .build());
    String py = Notebooks.marimo(runs, List.of(), "module-only code");
    assertThat(py).contains("async def _():\n    import asyncio\n");

    Path file = write(py);
    assertCompiles(file);
    SystemPython.Result r = SystemPython.run(dir, null, "-I", file.toString());
    assertThat(r.stdout()).isEqualTo("awaited\nran\n");
    assertThat(r.stderr()).contains("SyntaxError: '(' was never closed").contains("<cell-");
    assertThat(r.exit()).as("a cell raised").isEqualTo(1);
  }

  @Test
  void py_ofARunTheServerStopped_isADisabledCellThatDoesNotRunAgain() throws Exception {
    RunRecord run = RunFixtures.timedOut();
    String py = Notebooks.marimo(run);
    assertThat(py).contains("@app.cell(disabled=True)\ndef _():\n    import time\n");

    SystemPython.Result r = runPy(py);
    assertThat(r.stdout()).isEmpty();
    assertThat(r.stderr()).contains("is disabled");
    assertThat(r.exit()).isZero();
  }

  @Test
  void py_ofAFailingRun_printsItsTracebackAndGoesOnToTheNextCell() throws Exception {
    List<RunRecord> runs =
        List.of(
            RunFixtures.zeroDivision("run_0000000000000000004a"),
            RunFixtures.succeeded("run_0000000000000000004b", "print('after', x)\n", "after 1\n")
                .build());
    SystemPython.Result r = runPy(Notebooks.marimo(runs, List.of(), "failing"));
    assertThat(r.stdout()).isEqualTo("before\nafter 1\n");
    assertThat(r.stderr())
        .startsWith("Traceback (most recent call last):\n")
        .contains("line 3, in <module>\n    y = x / 0\n")
        .endsWith("ZeroDivisionError: division by zero\n")
        .doesNotContain("notebook.py");
    assertThat(r.exit()).isEqualTo(1);
  }

  @Test
  void py_hasMarimosFileLayout() {
    String py = Notebooks.marimo(RunFixtures.plain());
    assertThat(py)
        .contains(
            "\nimport marimo\n\n__generated_with = \""
                + MarimoWriter.GENERATED_WITH
                + "\"\napp = marimo.App()\n")
        .contains("\n\n\n@app.cell\ndef _():\n    import marimo as mo\n    return (mo,)\n")
        .contains("@app.cell(hide_code=True)\ndef _(mo):\n    mo.md(\"Say hello and add\\n\\n")
        .contains("@app.cell\ndef _():\n    print('hello')\n    print(1 + 2)\n    return\n")
        .endsWith("\n\nif __name__ == \"__main__\":\n    app.run()\n");
    // Issue 24 item 14: marimo's editor must not run the agent's code when it opens the file.
    String[] lines = py.split("\n", 7);
    assertThat(String.join("\n", lines[2], lines[3], lines[4], lines[5]) + "\n")
        .isEqualTo(MarimoWriter.NO_AUTORUN)
        .contains("auto_instantiate = false");
    assertThat(py.split("# /// script", -1)).hasSize(2);
  }

  private SystemPython.Result runPy(String py) throws Exception {
    Path file = write(py);
    assertCompiles(file);
    return SystemPython.run(dir, null, "-I", file.getFileName().toString());
  }

  private Path write(String py) throws Exception {
    return Files.writeString(dir.resolve("notebook.py"), py);
  }
}
