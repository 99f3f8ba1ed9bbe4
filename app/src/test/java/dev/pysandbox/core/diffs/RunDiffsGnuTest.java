package dev.pysandbox.core.diffs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The code diffs of {@link RunDiffs} against GNU diff's own output for the same pairs, applied with
 * GNU patch: apart from {@link RunDiffsTest} because both run as the host's processes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class RunDiffsGnuTest {
  static final String A = RunDiffsTest.A;
  static final String B = RunDiffsTest.B;

  @TempDir Path dir;

  static List<String[]> gnuCases() {
    String lines = RunDiffsTest.text(RunDiffsTest.numbered(30));
    return List.of(
        new String[] {"a\nb\nc\n", "a\nB\nc\n"},
        new String[] {"", "print(1)\nprint(2)\n"},
        new String[] {"print(1)\nprint(2)\n", ""},
        new String[] {"a\nb", "a\nb\n"},
        new String[] {"a\nb\n", "a\nc"},
        new String[] {"x = 1", "x = 2"},
        new String[] {lines, lines.replace("line 5\n", "").replace("line 25\n", "line 25!\n")},
        new String[] {lines, "header\n" + lines + "footer"});
  }

  /** GNU diff's own output for the same pair, where diff is installed. */
  @ParameterizedTest
  @MethodSource("gnuCases")
  void diff_onSimpleEdits_equalsGnuDiffAndAppliesWithGnuPatch(String old, String now)
      throws Exception {
    // scripts/setup.sh installs both (diffutils, patch); a missing one fails here, loudly.
    assertThat(Path.of("/usr/bin/diff")).isExecutable();
    assertThat(Path.of("/usr/bin/patch")).isExecutable();
    Path a = Files.createDirectories(dir.resolve(A)).resolve("code.py");
    Path b = Files.createDirectories(dir.resolve(B)).resolve("code.py");
    Files.writeString(a, old);
    Files.writeString(b, now);

    String ours =
        RunDiffs.diff(RunDiffsTest.run(B).code(now).build(), RunDiffsTest.run(A).code(old).build())
            .codeDiff();
    String gnu =
        exec(
            dir,
            "/usr/bin/diff",
            "-u",
            "--label",
            A + "/code.py",
            "--label",
            B + "/code.py",
            A + "/code.py",
            B + "/code.py");
    // GNU writes a one-line range as "-3" where the library writes "-3,1"; patch reads both.
    assertThat(ours)
        .isEqualTo(
            gnu.replaceAll("(?m)^@@ -(\\d+) ", "@@ -$1,1 ")
                .replaceAll("(?m) \\+(\\d+) @@$", " +$1,1 @@"));

    Files.writeString(dir.resolve("the.diff"), ours);
    exec(dir.resolve(A), "/usr/bin/patch", "-p1", "-s", "-i", "../the.diff");
    assertThat(Files.readString(a)).isEqualTo(now);
  }

  /** Runs a command in {@code cwd}, returns its stdout; diff's exit 1 ("differ") is success. */
  static String exec(Path cwd, String... command) throws Exception {
    Process p =
        new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s: %s", Arrays.toString(command), out).isLessThanOrEqualTo(1);
    return out;
  }
}
