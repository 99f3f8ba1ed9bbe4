package dev.pysandbox.packages;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Sandboxed;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ScriptBlocks finds what PEP 723's reference code finds: its regex under Python's {@code
 * re.finditer} and, for the script block, its {@code read()} (de-commenting and {@code tomllib}),
 * both run by the host's Python on the same scripts.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class ScriptBlocksTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Lines scripts are built from: openers, closers, content and lines that are neither. */
  private static final String[] LINES = {
    "# /// script",
    "# /// pyproject",
    "# /// a-b",
    "# ///",
    "# ///",
    "#",
    "# x",
    "# dependencies = [\"a\"]",
    "#x",
    "x = 1",
    "",
    "# /// ",
    "# ///x",
    " # ///",
    "# /// script ",
    "#  ///",
    "# \f x",
    "# a\u2028b",
    "# \u00e9",
  };

  @Test
  void blocks_matchTheReferenceRegexOnGeneratedScripts() throws Exception {
    Random random = new Random(723);
    List<String> scripts = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      StringBuilder s = new StringBuilder();
      int n = random.nextInt(14);
      for (int k = 0; k < n; k++) {
        s.append(LINES[random.nextInt(LINES.length)]);
        if (k < n - 1 || random.nextBoolean()) {
          s.append('\n');
        }
      }
      scripts.add(s.toString());
    }
    String python =
        """
        import json, re, sys
        REGEX = sys.argv[1]
        out = []
        for script in json.load(sys.stdin):
            out.append([[m.group('type'), m.group('content'), m.start(), m.end()]
                        for m in re.finditer(REGEX, script)])
        print(json.dumps(out))
        """;
    JsonNode expected = python(python, scripts, ScriptBlocks.REFERENCE_REGEX);
    int blocks = 0;
    for (int i = 0; i < scripts.size(); i++) {
      String script = scripts.get(i);
      List<List<String>> actual = new ArrayList<>();
      for (ScriptBlocks.Block b : ScriptBlocks.scan(script).blocks()) {
        actual.add(List.of(b.type(), b.content()));
      }
      List<List<String>> reference = new ArrayList<>();
      for (JsonNode m : expected.get(i)) {
        reference.add(List.of(m.get(0).asText(), m.get(1).asText()));
      }
      assertThat(actual).as(JSON.writeValueAsString(script)).isEqualTo(reference);
      blocks += actual.size();
    }
    assertThat(blocks).as("the generated scripts hold blocks").isGreaterThan(100);
  }

  @Test
  void metadata_matchesTheReferenceReadOnValidScripts() throws Exception {
    List<String> scripts =
        List.of(
            ScriptMetadataTest.PEP_EXAMPLE,
            "# /// script\n# dependencies = [\n#\n#   \"a\",\n# \"b\" ]\n# ///\n",
            "# /// script\n# dependencies = [\"a\u2028b\"]\n# ///\n",
            "# /// script\n# dependencies = [\"a\", \"b\u2028c\"]\n# ///\n",
            "# /// pyproject\n# x = 1\n# ///\n# /// script\n# dependencies = []\n# ///",
            "# /// script\n# dependencies = [\"a\"]\n# ///\n\n#\n# ///\n",
            "# /// script\n# [tool.x]\n# y = 1\n# ///\n",
            "x = '''\n# /// script\n# dependencies = [\"in-a-string\"]\n# ///\n'''\n");
    String python =
        """
        import json, re, sys, tomllib
        REGEX = sys.argv[1]
        def read(script):
            name = 'script'
            matches = list(filter(lambda m: m.group('type') == name, re.finditer(REGEX, script)))
            if len(matches) > 1:
                raise ValueError(f'Multiple {name} blocks found')
            elif len(matches) == 1:
                content = ''.join(
                    line[2:] if line.startswith('# ') else line[1:]
                    for line in matches[0].group('content').splitlines(keepends=True))
                return tomllib.loads(content)
            else:
                return None
        out = []
        for script in json.load(sys.stdin):
            m = read(script) or {}
            out.append([m.get('dependencies', []), m.get('requires-python')])
        print(json.dumps(out))
        """;
    JsonNode expected = python(python, scripts, ScriptBlocks.REFERENCE_REGEX);
    for (int i = 0; i < scripts.size(); i++) {
      ScriptMetadata m = ScriptMetadata.of(scripts.get(i));
      List<String> deps = new ArrayList<>();
      expected.get(i).get(0).forEach(d -> deps.add(d.asText()));
      assertThat(m.dependencies()).as(scripts.get(i)).isEqualTo(deps);
      JsonNode rp = expected.get(i).get(1);
      assertThat(m.requiresPython()).isEqualTo(rp.isNull() ? null : rp.asText());
    }
  }

  private static JsonNode python(String code, List<String> scripts, String arg) throws Exception {
    HostPython.Result r =
        HostPython.run(
            Duration.ofSeconds(100), JSON.writeValueAsString(scripts), List.of("-c", code, arg));
    assertThat(r.exit()).as(r.describe()).isZero();
    return JSON.readTree(r.stdout());
  }
}
