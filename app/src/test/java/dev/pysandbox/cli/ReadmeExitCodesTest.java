package dev.pysandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * README's table of exit codes is ErrorCode's mapping (issue 23, item 16: codes 6 and 8 were
 * documented nowhere): every error code is listed in the row of its exit code, and no row lists a
 * code that exits otherwise. A code added to ErrorCode without a row fails here.
 */
@Fast
class ReadmeExitCodesTest {
  private static final Pattern WIRE_NAME = Pattern.compile("`([a-z_]+)`");

  @Test
  void everyErrorCode_isInTheReadmeRowOfItsExitCode_andEveryRowMatchesErrorCode()
      throws IOException {
    Map<Integer, TreeSet<String>> documented = documentedRows();
    Map<Integer, TreeSet<String>> declared = new TreeMap<>();
    for (ErrorCode c : ErrorCode.values()) {
      declared.computeIfAbsent(c.exitCode(), k -> new TreeSet<>()).add(c.wireName());
    }
    List<String> wireNames = new ArrayList<>();
    for (ErrorCode c : ErrorCode.values()) {
      wireNames.add(c.wireName());
    }

    for (Map.Entry<Integer, TreeSet<String>> e : declared.entrySet()) {
      assertThat(documented.get(e.getKey()))
          .as("README's row for exit %d", e.getKey())
          .isNotNull()
          .containsAll(e.getValue());
    }
    documented.forEach(
        (exit, names) ->
            assertThat(names.stream().filter(wireNames::contains).toList())
                .as("error codes README lists under exit %d", exit)
                .allSatisfy(
                    n ->
                        assertThat(ErrorCode.valueOf(n.toUpperCase()).exitCode()).isEqualTo(exit)));
    assertThat(documented).containsKeys(0, 1, 124);
  }

  /** Exit code → the backquoted names in its row of README's "Exit codes" table. */
  private static Map<Integer, TreeSet<String>> documentedRows() throws IOException {
    List<String> lines = Files.readAllLines(Path.of("README.md"));
    int header = lines.indexOf("| exit | meaning |");
    assertThat(header).as("README has the exit codes table").isPositive();
    Map<Integer, TreeSet<String>> rows = new TreeMap<>();
    for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
      String[] cells = lines.get(i).split("\\|", -1);
      String exit = cells[1].strip();
      if (!exit.matches("[0-9]+")) {
        continue; // a range: the code's own exit code
      }
      TreeSet<String> names = new TreeSet<>();
      Matcher m = WIRE_NAME.matcher(cells[2]);
      while (m.find()) {
        names.add(m.group(1));
      }
      rows.put(Integer.parseInt(exit), names);
    }
    return rows;
  }
}
