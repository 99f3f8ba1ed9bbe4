package dev.pysandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.config.ConfigSetting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * README's settings table (under "## Configuration") has one row per setting, in the order {@code
 * pysandbox config} lists them, each with its environment variable, its default and what it does;
 * and no row for a key that is no setting.
 */
@Fast
class ReadmeSettingsTest {
  private static final Pattern ROW =
      Pattern.compile("^\\| `([a-z0-9_]+)` \\| `([A-Z0-9_]+)` \\| `([^`]*)` \\| (.*) \\|$");

  @Test
  void settingsTable_hasARowForEverySetting_withItsVariableAndDefault() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    int from = readme.indexOf("## Configuration");
    assertThat(from).isPositive();
    String section = readme.substring(from, readme.indexOf("\n## ", from + 1));
    List<String> keys = new ArrayList<>();
    for (String line : section.split("\n")) {
      Matcher m = ROW.matcher(line);
      if (!m.matches()) {
        continue;
      }
      String key = m.group(1);
      keys.add(key);
      ConfigSetting s = ConfigSetting.byKey(key);
      assertThat(s).as("README's row %s names a setting", key).isNotNull();
      assertThat(m.group(2)).as("environment variable of %s", key).isEqualTo(s.envName());
      String shown = s.defaultValue().isEmpty() ? "(empty)" : s.defaultValue();
      assertThat(m.group(3)).as("default of %s", key).isEqualTo(shown);
      assertThat(m.group(4).trim()).as("what %s does", key).hasSizeGreaterThan(10);
    }
    assertThat(keys)
        .as("README's settings table, row by row")
        .containsExactlyElementsOf(ConfigSetting.all().stream().map(ConfigSetting::key).toList());
  }
}
