package dev.pysandbox.packages;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** PEP 723 inline script metadata: the dependencies and requires-python of a script block. */
@Fast
class ScriptMetadataTest {
  /** The example of PEP 723. */
  static final String PEP_EXAMPLE =
      """
      # /// script
      # requires-python = ">=3.11"
      # dependencies = [
      #   "requests<3",
      #   "rich",
      # ]
      # ///

      import requests
      from rich.pretty import pprint

      resp = requests.get("https://peps.python.org/api/peps.json")
      data = resp.json()
      pprint([(k, v["title"]) for k, v in data.items()][:10])
      """;

  private static void assertMalformed(String code, String... why) {
    var thrown =
        assertThatThrownBy(() -> ScriptMetadata.of(code))
            .isInstanceOfSatisfying(
                PysandboxException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
            .hasMessageContaining("script metadata");
    for (String w : why) {
      thrown.hasMessageContaining(w);
    }
  }

  @Test
  void pepExample_givesItsDependenciesAndRequiresPython() {
    ScriptMetadata m = ScriptMetadata.of(PEP_EXAMPLE);
    assertThat(m.dependencies()).containsExactly("requests<3", "rich");
    assertThat(m.requiresPython()).isEqualTo(">=3.11");
    assertThat(ScriptMetadata.dependencies(PEP_EXAMPLE)).containsExactly("requests<3", "rich");
  }

  @Test
  void noBlock_isNone() {
    assertThat(ScriptMetadata.of(null)).isEqualTo(ScriptMetadata.NONE);
    assertThat(ScriptMetadata.of("")).isEqualTo(ScriptMetadata.NONE);
    assertThat(ScriptMetadata.of("print('hi')\n# a comment\n")).isEqualTo(ScriptMetadata.NONE);
    assertThat(ScriptMetadata.dependencies("x = 1")).isEmpty();
    assertThat(ScriptMetadata.NONE.requiresPython()).isNull();
  }

  @Test
  void blockWithoutDependencies_hasNone() {
    ScriptMetadata m = ScriptMetadata.of("# /// script\n# requires-python = \">=3.8\"\n# ///\n");
    assertThat(m.dependencies()).isEmpty();
    assertThat(m.requiresPython()).isEqualTo(">=3.8");
    assertThat(ScriptMetadata.of("# /// script\n#\n# ///\n")).isEqualTo(ScriptMetadata.NONE);
  }

  @Test
  void blockAtTheEnd_needsNoFinalNewline() {
    assertThat(ScriptMetadata.dependencies("x = 1\n# /// script\n# dependencies = [\"a\"]\n# ///"))
        .containsExactly("a");
  }

  @Test
  void twoScriptBlocks_areRefused() {
    String code =
        "# /// script\n# dependencies = [\"a\"]\n# ///\nx = 1\n"
            + "# /// script\n# dependencies = [\"b\"]\n# ///\n";
    assertMalformed(code, "2 '# /// script' blocks", "[1, 5]", "allows one");
  }

  @Test
  void otherBlockTypes_areIgnored() {
    String other = "# /// pyproject\n# dependencies = [\"ignored\"]\n# ///\n";
    assertThat(ScriptMetadata.of(other)).isEqualTo(ScriptMetadata.NONE);
    String both = other + "x = 1\n# /// script\n# dependencies = [\"kept\"]\n# ///\n";
    assertThat(ScriptMetadata.dependencies(both)).containsExactly("kept");
  }

  @Test
  void aScriptOpenerInsideAnotherBlock_isPartOfThatBlock() {
    String code =
        "# /// notes\n# /// script\n# dependencies = [\"inner\"]\n# ///\n"
            + "# /// script\n# dependencies = [\"outer\"]\n# ///\n";
    // The notes block runs to the last '# ///' of the comment run, swallowing both.
    assertThat(ScriptMetadata.of(code)).isEqualTo(ScriptMetadata.NONE);
    String apart = "# /// notes\n# x\n# ///\n\n# /// script\n# dependencies = [\"b\"]\n# ///\n";
    assertThat(ScriptMetadata.dependencies(apart)).containsExactly("b");
  }

  @Test
  void malformedToml_isRefusedSayingWhy() {
    assertMalformed(
        "# /// script\n# dependencies = [\"a\"\n# ///\n", "line 1", "malformed", "not valid TOML");
    assertMalformed("# /// script\n# dependencies = \n# ///\n", "not valid TOML");
    assertMalformed(
        "# /// script\n# dependencies = [\"a\"]\n# dependencies = [\"b\"]\n# ///\n",
        "not valid TOML");
  }

  @Test
  void dependenciesNotAnArrayOfStrings_areRefused() {
    assertMalformed(
        "# /// script\n# dependencies = \"numpy\"\n# ///\n", "'dependencies' is not an array");
    assertMalformed(
        "# /// script\n# dependencies = [\"numpy\", 3]\n# ///\n",
        "'dependencies' entry 2 is not a string");
    assertMalformed(
        "# /// script\n# dependencies = [[\"numpy\"]]\n# ///\n", "entry 1 is not a string");
    assertMalformed("# /// script\n# [dependencies]\n# numpy = \"1\"\n# ///\n", "is not an array");
    assertMalformed("# /// script\n# requires-python = 3.11\n# ///\n", "'requires-python'");
  }

  @Test
  void unclosedBlock_isRefusedNamingItsLine() {
    assertMalformed("x = 1\n# /// script\n# dependencies = [\"a\"]\n", "line 2", "opens no block");
    assertMalformed(
        "# /// script\n# dependencies = [\"a\"]\n\n# ///\n", "line 1", "starts with '#'");
    assertMalformed("# /// script\n# dependencies = [\"a\"]\nimport os\n# ///\n", "opens no block");
    assertMalformed("# /// script\n# ///\n", "opens no block");
    // A stray opener is refused even beside a proper block.
    assertMalformed(
        "# /// script\n# dependencies = [\"a\"]\n# ///\nx = 1\n# /// script\n", "line 5");
  }

  @Test
  void openerOfAnotherTypeUnclosed_isIgnored() {
    assertThat(
            ScriptMetadata.dependencies(
                "# /// notes\n# x\nprint()\n# /// script\n# dependencies = [\"a\"]\n# ///\n"))
        .containsExactly("a");
  }

  @Test
  void theBlockEndsAtTheLastClosingLineOfTheCommentRun() {
    // As the PEP's regex reads it: a '# ///' followed by more comment lines is content.
    assertMalformed("# /// script\n# dependencies = [\"a\"]\n# ///\n#\n# ///\n", "not valid TOML");
    assertThat(
            ScriptMetadata.dependencies(
                "# /// script\n# dependencies = [\"a\"]\n# ///\n\n# more comments\n# ///\n"))
        .containsExactly("a");
  }

  @Test
  void decommenting_dropsHashSpaceOrHash() {
    String code = "# /// script\n# dependencies = [\n#\n#   \"a\",\n# \"b\" ]\n# ///\n";
    assertThat(ScriptMetadata.dependencies(code)).containsExactly("a", "b");
    // "#x" is no content line (the PEP's regex takes "#" or "# ..."), so no block either.
    assertMalformed("# /// script\n#dependencies = [\"a\"]\n# ///\n", "opens no block");
  }

  @Test
  void crlfAndCrLineEndings_readLikeNewlines() {
    String crlf = PEP_EXAMPLE.replace("\n", "\r\n");
    assertThat(ScriptMetadata.of(crlf)).isEqualTo(ScriptMetadata.of(PEP_EXAMPLE));
    String cr = PEP_EXAMPLE.replace("\n", "\r");
    assertThat(ScriptMetadata.of(cr)).isEqualTo(ScriptMetadata.of(PEP_EXAMPLE));
    String mixed = "# /// script\r\n# dependencies = [\"a\"]\n# ///\r";
    assertThat(ScriptMetadata.dependencies(mixed)).containsExactly("a");
  }

  @Test
  void dependencies_areRawAndRequirementsRefusesInjection() {
    String code =
        "# /// script\n# dependencies = [\"numpy; os.system('x')\", \"--index-url=http://e\"]\n"
            + "# ///\n";
    List<String> deps = ScriptMetadata.dependencies(code);
    assertThat(deps).containsExactly("numpy; os.system('x')", "--index-url=http://e");
    assertThatThrownBy(() -> Requirements.parse(deps))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("marker");
  }

  @Test
  void aBlockOverTheLimit_isRefused() {
    String big = "# x = \"" + "y".repeat(ScriptMetadata.MAX_BLOCK_CHARS) + "\"\n";
    assertMalformed("# /// script\n" + big + "# ///\n", "longer than 65536 characters");
  }

  /** Regression: Jackson's TOML parser overflowed its stack on a few thousand nested arrays. */
  @Test
  void deeplyNestedToml_isRefusedBeforeParsing() {
    for (int depth : List.of(33, 1_000, 20_000)) {
      String code = "# /// script\n# x = " + "[".repeat(depth) + "]".repeat(depth) + "\n# ///\n";
      assertMalformed(code, "nests arrays or tables more than 32 deep");
    }
    String inline = "# /// script\n# x = " + "{a=".repeat(5_000) + "1" + "}".repeat(5_000);
    assertMalformed(inline + "\n# ///\n", "more than 32 deep");
    String ok = "# /// script\n# x = " + "[".repeat(32) + "]".repeat(32) + "\n# ///\n";
    assertThat(ScriptMetadata.of(ok)).isEqualTo(ScriptMetadata.NONE);
  }

  @Test
  void nesting_skipsStringsAndCommentsAsTomlReadsThem() {
    assertThat(ScriptMetadata.nesting("x = \"[[[[\"\ny = '[[[['\n# [[[[\n")).isZero();
    assertThat(ScriptMetadata.nesting("x = \"\"\"[[[\n[[[\"\"\"\ny = '''[[\n['''")).isZero();
    assertThat(ScriptMetadata.nesting("x = [\"a\\\"[[[\", '\\']")).isEqualTo(1);
    assertThat(ScriptMetadata.nesting("[table]\n[[array]]\nx = {a = [1]}")).isEqualTo(2);
    // Brackets closed inside strings do not hide real ones.
    assertThat(ScriptMetadata.nesting("x = [\"]]]\", [\"]]]\", [1]]]")).isEqualTo(3);
    // A multi-line string's closing run of up to five quotes ends it; nothing after is hidden.
    assertThat(ScriptMetadata.nesting("x = [\"\"\"a\"\"\"\"\", [[1]]]")).isEqualTo(3);
    assertThat(ScriptMetadata.nesting("x = ['''a''''', [[1]]]")).isEqualTo(3);
  }

  /** Regression: java.util.regex overflowed its stack on a block of about a thousand lines. */
  @Test
  void aBlockOfManyLines_isRead() {
    StringBuilder code = new StringBuilder("# /// script\n# dependencies = [\n");
    for (int i = 0; i < 10_000; i++) {
      code.append("#\n");
    }
    code.append("# \"a\"]\n# ///\n");
    assertThat(ScriptMetadata.dependencies(code.toString())).containsExactly("a");
  }

  @Test
  void onlyTheFirstMegabyteIsScanned() {
    String block = "# /// script\n# dependencies = [\"a\"]\n# ///\n";
    String filler = ("x = 1" + " ".repeat(58) + "\n").repeat(ScriptMetadata.MAX_SCANNED_CHARS / 64);
    assertThat(filler).hasSize(ScriptMetadata.MAX_SCANNED_CHARS);
    assertThat(ScriptMetadata.dependencies(block + filler)).containsExactly("a");
    assertThat(ScriptMetadata.dependencies(filler + block)).isEmpty();
    // A block cut by the limit is not read as closed at the cut.
    String cut =
        filler.substring(0, filler.length() - 64)
            + "# /// script\n# dependencies = [\"a\"]\n"
            + "#\n".repeat(40)
            + "# ///\n";
    assertThat(cut.length()).isGreaterThan(ScriptMetadata.MAX_SCANNED_CHARS);
    assertMalformed(cut, "opens no block");
  }
}
