package dev.pysandbox.packages;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** PEP 508 requirements: what is accepted and its canonical text, what is refused and why. */
@Sandboxed
class RequirementTest {
  /** Accepted specs and their canonical text. */
  static final Map<String, String> VALID = new LinkedHashMap<>();

  static {
    VALID.put("numpy", "numpy");
    VALID.put("a", "a");
    VALID.put("  NumPy  ", "numpy");
    VALID.put("Foo_Bar.baz", "foo-bar-baz");
    VALID.put("zope.interface", "zope-interface");
    VALID.put("requests[socks]", "requests[socks]");
    VALID.put("requests [Socks, security ,socks]", "requests[security,socks]");
    VALID.put("pkg[]", "pkg");
    VALID.put("pkg[Extra_One]>=1", "pkg[extra-one]>=1");
    VALID.put("numpy>=1.26", "numpy>=1.26");
    VALID.put("numpy >= 1.0, < 2.0", "numpy<2.0,>=1.0");
    VALID.put("numpy (>=1.0,<2.0)", "numpy<2.0,>=1.0");
    VALID.put("numpy(>=1.0)", "numpy>=1.0");
    VALID.put("numpy>1.0,<=3,!=2.1", "numpy!=2.1,<=3,>1.0");
    VALID.put("numpy>=1.0,>=1.0", "numpy>=1.0");
    VALID.put("numpy===1.0", "numpy===1.0");
    VALID.put("numpy===1.0RC1", "numpy===1.0rc1");
    VALID.put("numpy==1.0.*", "numpy==1.0.*");
    VALID.put("numpy!=1.5.*", "numpy!=1.5.*");
    VALID.put("numpy~=1.4", "numpy~=1.4");
    VALID.put("numpy~=1.4.5", "numpy~=1.4.5");
    VALID.put("numpy==1.0+local", "numpy==1.0+local");
    VALID.put("numpy==1.0+Ubuntu-01", "numpy==1.0+ubuntu.1");
    VALID.put("numpy!=1.0+local", "numpy!=1.0+local");
    VALID.put("numpy>=1!2.0", "numpy>=1!2.0");
    VALID.put("numpy>=0!2.0", "numpy>=2.0");
    VALID.put("numpy>=V1.0RC1", "numpy>=1.0rc1");
    VALID.put("numpy>=1.0-alpha.2", "numpy>=1.0a2");
    VALID.put("numpy>=1.0beta", "numpy>=1.0b0");
    VALID.put("numpy>=1.0c3", "numpy>=1.0rc3");
    VALID.put("numpy==1.0-1", "numpy==1.0.post1");
    VALID.put("numpy==1.0.rev2", "numpy==1.0.post2");
    VALID.put("numpy==1.0.dev", "numpy==1.0.dev0");
    VALID.put("numpy==1.0a1.post2.dev3", "numpy==1.0a1.post2.dev3");
    VALID.put("numpy==01.02", "numpy==1.2");
    VALID.put("tomli; python_version < '3.11'", "tomli; python_version < \"3.11\"");
    VALID.put("pywin32;sys_platform==\"win32\"", "pywin32; sys_platform == \"win32\"");
    VALID.put(
        "pkg; python_version >= \"3.8\" and (os_name == 'posix' or sys_platform == 'darwin')",
        "pkg; python_version >= \"3.8\" and (os_name == \"posix\" or sys_platform == \"darwin\")");
    VALID.put(
        "pkg;python_version>'3'or os_name=='nt'and extra=='x'",
        "pkg; python_version > \"3\" or os_name == \"nt\" and extra == \"x\"");
    VALID.put("pkg; 'linux' in sys_platform", "pkg; \"linux\" in sys_platform");
    VALID.put("pkg; os_name not in'nt java'", "pkg; os_name not in \"nt java\"");
    VALID.put("pkg; (python_version > '3')", "pkg; python_version > \"3\"");
    VALID.put(
        "pkg; ((os_name=='a' or os_name=='b')) and python_version>'3'",
        "pkg; (os_name == \"a\" or os_name == \"b\") and python_version > \"3\"");
    VALID.put(
        "pkg; os_name=='a' or (os_name=='b' or os_name=='c')",
        "pkg; os_name == \"a\" or os_name == \"b\" or os_name == \"c\"");
    VALID.put(
        "pkg; platform_python_implementation == 'CPython' and implementation_name == 'cpython'",
        "pkg; platform_python_implementation == \"CPython\" and implementation_name == \"cpython\"");
    VALID.put(
        "pkg; python_full_version >= '3.8.1' and platform_machine == 'x86_64'",
        "pkg; python_full_version >= \"3.8.1\" and platform_machine == \"x86_64\"");
    VALID.put(
        "pkg; platform_system=='Linux' and platform_release>='5.15.0-1-generic'",
        "pkg; platform_system == \"Linux\" and platform_release >= \"5.15.0-1-generic\"");
    VALID.put(
        "pkg; platform_version != '' and implementation_version ~= '3.8'",
        "pkg; platform_version != \"\" and implementation_version ~= \"3.8\"");
    VALID.put("pkg; python_version == '3.*'", "pkg; python_version == \"3.*\"");
    VALID.put(
        "pkg[b,a] (>=1.0, <2.0) ; python_version >= \"3.8\"",
        "pkg[a,b]<2.0,>=1.0; python_version >= \"3.8\"");
    VALID.put("tinypkg==1.0", "tinypkg==1.0");
    VALID.put("x".repeat(200), "x".repeat(200));
  }

  /** Refused specs and a word of the reason each message must give. */
  static Stream<Arguments> refused() {
    return Stream.of(
        Arguments.of("numpy; os.system('x')", "marker"),
        Arguments.of("numpy; os.name == 'posix'", "not a marker variable"),
        Arguments.of("--index-url=http://evil", "option"),
        Arguments.of("-e .", "option"),
        Arguments.of("-r req.txt", "option"),
        Arguments.of("numpy==1.0 --hash=sha256:x", "option"),
        Arguments.of("numpy -i x", "option"),
        Arguments.of("../x.whl", "path"),
        Arguments.of("/tmp/x.whl", "path"),
        Arguments.of("./pkg", "path"),
        Arguments.of("~/pkg", "path"),
        Arguments.of("numpy[../x]", "path"),
        Arguments.of("C:\\x\\y.whl", "path"),
        Arguments.of("git+https://github.com/x/y", "URL"),
        Arguments.of("git+ssh:x", "URL"),
        Arguments.of("https://x/y.whl", "URL"),
        Arguments.of("pkg @ https://x/y.whl", "direct reference"),
        Arguments.of("pkg@file:y", "direct reference"),
        Arguments.of("numpy\nrequests", "line break"),
        Arguments.of("numpy\r", "line break"),
        Arguments.of("numpy\0", "control character"),
        Arguments.of("numpy\t>=1", "control character"),
        Arguments.of("n\u00fcmpy", "non-ASCII"),
        Arguments.of("numpy && rm -rf /", "shell"),
        Arguments.of("numpy|sh", "shell"),
        Arguments.of("$(id)", "shell"),
        Arguments.of("`id`", "shell"),
        Arguments.of("numpy==${VERSION}", "shell"),
        Arguments.of("", "empty"),
        Arguments.of("   ", "empty"),
        Arguments.of("x".repeat(201), "longer than 200"),
        Arguments.of("numpy #comment", "comment"),
        Arguments.of("numpy{x}", "no requirement has"),
        Arguments.of("numpy:1", "no requirement has"),
        Arguments.of("numpy requests", "whitespace inside the name"),
        Arguments.of("num py>=1", "whitespace inside the name"),
        Arguments.of("_numpy", "must start and end with a letter or a digit"),
        Arguments.of("numpy-", "must start and end with a letter or a digit"),
        Arguments.of("[a]", "does not start with a package name"),
        Arguments.of("numpy[a", "extras are malformed"),
        Arguments.of("numpy[a b]", "extras are malformed"),
        Arguments.of("numpy[-a]", "extras are malformed"),
        Arguments.of("numpy>=", "no version"),
        Arguments.of("numpy>=1.0,", "version operator"),
        Arguments.of("numpy=1.0", "version operator"),
        Arguments.of("numpy ~ 1", "version operator"),
        Arguments.of("numpy (>=1.0", "not closed"),
        Arguments.of("numpy == 1.0 2.0", "unexpected"),
        Arguments.of("numpy>=1.x", "not a PEP 440 version"),
        Arguments.of("numpy>=1.0+local", "local version label"),
        Arguments.of("numpy~=1.0+local", "local version label"),
        Arguments.of("numpy>=1.0.*", "'.*' is allowed only after == or !="),
        Arguments.of("numpy===1.0.*", "'.*' is allowed only after == or !="),
        Arguments.of("numpy===1.0,<2", "must be the only version specifier"),
        Arguments.of("numpy (===1.0, ===1.0.0)", "must be the only version specifier"),
        Arguments.of("numpy===1.0; os_name == 'nt'", "without a marker"),
        Arguments.of("numpy==1.0a1.*", "plain release"),
        Arguments.of("numpy==1.0+local.*", "plain release"),
        Arguments.of("numpy==1.*.0", "'*'"),
        Arguments.of("numpy~=1", "two parts"),
        Arguments.of("x.whl", "archive"),
        Arguments.of("Foo.TAR.GZ", "archive"),
        Arguments.of("foo==1.0+local.zip", "archive"),
        Arguments.of("numpy;", "marker"),
        Arguments.of("numpy;  ", "marker"),
        Arguments.of("numpy; python_version", "marker"),
        Arguments.of("numpy; python_version >= '3' and", "marker"),
        Arguments.of("numpy; python_version >= '3' extra", "marker"),
        Arguments.of("numpy; (python_version >= '3'", "')'"),
        Arguments.of("numpy; python_version >= '3", "not closed"),
        Arguments.of("numpy; os_name not 'nt'", "' in' after 'not'"),
        Arguments.of("numpy; os_name not  in 'nt'", "' in' after 'not'"),
        Arguments.of("numpy; 'a' == 'b'", "two strings"),
        Arguments.of("numpy; os_name == \"a'b\"", "may not"),
        Arguments.of("numpy; os_name == 'a,b'", "may not"),
        Arguments.of("numpy; python_version>'3'andos_name=='nt'", "marker"),
        Arguments.of("numpy; python_version >= '3' AND os_name == 'nt'", "marker"));
  }

  @Test
  void parse_validForms_giveTheirCanonicalText() {
    VALID.forEach(
        (spec, canonical) ->
            assertThat(Requirement.parse(spec).canonical()).as(spec).isEqualTo(canonical));
  }

  @Test
  void parse_splitsTheParts() {
    Requirement r = Requirement.parse("Tiny_Pkg [B, a] (>= 1.0, <2) ; python_version>='3.8'");
    assertThat(r.name()).isEqualTo("Tiny_Pkg");
    assertThat(r.normalizedName()).isEqualTo("tiny-pkg");
    assertThat(r.extras()).containsExactly("a", "b");
    assertThat(r.specifier()).isEqualTo("<2,>=1.0");
    assertThat(r.marker()).isEqualTo("python_version >= \"3.8\"");
    assertThat(r.canonical()).isEqualTo("tiny-pkg[a,b]<2,>=1.0; python_version >= \"3.8\"");
    assertThat(r).hasToString(r.canonical());

    Requirement bare = Requirement.parse("numpy");
    assertThat(bare.extras()).isEmpty();
    assertThat(bare.specifier()).isEmpty();
    assertThat(bare.marker()).isEmpty();
  }

  @Test
  void canonical_isTheSameForEverySpellingOfOneRequirement() {
    List<List<String>> same =
        List.of(
            List.of("NumPy >= 1.0", "numpy>=1.0", "numpy (>=1.0)", "NUMPY>=v1.0"),
            List.of("foo-bar", "Foo_Bar", "foo.bar", "FOO__BAR", "foo-_-bar"),
            List.of("pkg[a,b]", "pkg[B, A]", "pkg [b,a,a]", "PKG[a,b]"),
            List.of("pkg<2,>=1", "pkg>=1,<2", "pkg (<2, >=1)", "pkg >=1 , <2"),
            List.of("pkg>=1.0rc1", "pkg>=1.0RC1", "pkg>=1.0-rc.1", "pkg>=1.0c1"),
            List.of(
                "pkg; python_version>'3.8'",
                "pkg ; python_version > \"3.8\"",
                "pkg;(python_version  >  '3.8')"),
            List.of(
                "pkg; os_name=='a' and (os_name=='b' and os_name=='c')",
                "pkg; (os_name=='a' and os_name=='b') and os_name=='c'"));
    for (List<String> spellings : same) {
      String first = Requirement.parse(spellings.get(0)).canonical();
      for (String s : spellings) {
        assertThat(Requirement.parse(s).canonical()).as(s).isEqualTo(first);
      }
    }
  }

  @Test
  void canonical_keepsWhatMeansSomethingElseApart() {
    assertThat(Requirement.parse("pkg>=1").canonical())
        .isNotEqualTo(Requirement.parse("pkg>1").canonical());
    assertThat(Requirement.parse("pkg; os_name == 'a' or os_name == 'b' and extra == 'x'").marker())
        .isEqualTo("os_name == \"a\" or os_name == \"b\" and extra == \"x\"");
    assertThat(
            Requirement.parse("pkg; (os_name == 'a' or os_name == 'b') and extra == 'x'").marker())
        .isEqualTo("(os_name == \"a\" or os_name == \"b\") and extra == \"x\"");
  }

  @ParameterizedTest
  @MethodSource("refused")
  void parse_refusesNamingTheSpecAndWhy(String spec, String why) {
    assertThatThrownBy(() -> Requirement.parse(spec))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageStartingWith("package " + Requirement.shown(spec) + " is refused: ")
        .hasMessageContaining(why);
  }

  @Test
  void parse_refusesNull() {
    assertThatThrownBy(() -> Requirement.parse(null))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("(missing)")
        .hasMessageContaining("empty");
  }

  @Test
  void messages_neverCarryAControlCharacter() {
    for (String spec : List.of("numpy\0", "numpy\r", "numpy\nx", "a\u001b[31m")) {
      assertThatThrownBy(() -> Requirement.parse(spec))
          .satisfies(e -> assertThat(e.getMessage().chars().noneMatch(c -> c < 0x20)).isTrue());
    }
  }

  @Test
  void constructor_refusesComponentsThatAreNotCanonical() {
    assertThat(new Requirement("NumPy", "numpy", List.of("a"), ">=1.0", "os_name == \"nt\""))
        .extracting(Requirement::canonical)
        .isEqualTo("numpy[a]>=1.0; os_name == \"nt\"");
    List<Runnable> bad =
        List.of(
            () -> new Requirement("numpy\n--index-url", "numpy", List.of(), "", ""),
            () -> new Requirement("numpy", "NumPy", List.of(), "", ""),
            () -> new Requirement("numpy", "numpy", List.of("B"), "", ""),
            () -> new Requirement("numpy", "numpy", List.of("b", "a"), "", ""),
            () -> new Requirement("numpy", "numpy", List.of("a", "a"), "", ""),
            () -> new Requirement("numpy", "numpy", List.of(), ">= 1.0", ""),
            () -> new Requirement("numpy", "numpy", List.of(), ">=1.0 --hash=x", ""),
            () -> new Requirement("numpy", "numpy", List.of(), ">=2,<1", ""),
            () -> new Requirement("numpy", "numpy", List.of(), "", "os_name=='nt'"),
            () -> new Requirement("numpy", "numpy", List.of(), "", "os_name == \"a -e x\""),
            () -> new Requirement("numpy", "numpy", List.of(), "", "os_name == \"nt\"\n-e ."),
            () -> new Requirement("x.whl", "x-whl", List.of(), "", ""));
    for (Runnable r : bad) {
      assertThatThrownBy(r::run)
          .isInstanceOf(PysandboxException.class)
          .hasMessageContaining("not in canonical form");
    }
  }

  /**
   * Every spec accepted here is accepted by pip's own parser (the packaging vendored in the host's
   * pip), with the same name, extras, specifiers and marker (evaluated in a spread of environments)
   * as its canonical text; and the canonical lines, as a requirements file, are read by pip's
   * requirements-file reader as exactly those requirements: no option, no URL, no path.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void everyAcceptedSpec_isAcceptedByPipAlike(@TempDir Path dir) throws Exception {
    checkWithPip(List.copyOf(VALID.keySet()), dir);
  }

  /**
   * The same check over specs generated from pieces and then mutated by a character inserted or
   * deleted: those accepted here (a few hundred) must all be accepted by pip alike.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void generatedSpecs_acceptedHere_areAcceptedByPipAlike(@TempDir Path dir) throws Exception {
    String[] names = {"numpy", "Foo_Bar", "a", "x.y", "A-b_c.d", "9x"};
    String[] extras = {"", "[a]", "[a,B]", "[ a , b ]", "[]", "[a_b]"};
    String[] specifiers = {
      "",
      ">=1.0",
      "==1.0.*",
      "~=1.4",
      "===1.0",
      "!=1.0+loc.1",
      ">=1.0,<2",
      "(>=1.0)",
      "(<2, >1)",
      "==1!2.0rc1.post2.dev3",
      ">=v1.0",
      "==1.0-1",
      "<=2.0b",
      "!=1.*",
      ">1.0.post"
    };
    String[] markers = {
      "",
      ";python_version>'3'",
      "; os_name=='nt' and extra == \"x\"",
      "; ('linux' in sys_platform or os_name not in 'nt')",
      "; (python_version<'3.8' or (os_name=='a' and extra=='b')) and platform_machine!='arm'",
      "; implementation_name=='cpython' or platform_system=='Linux' and python_full_version>='3'"
    };
    String[] spaces = {"", " ", "  "};
    String mutations = "[]()<>=!~,;'\" .-_*+a1";
    Random random = new Random(723);
    List<String> accepted = new ArrayList<>();
    // 1,500 draws, about 850 accepted: pip's own parser (pyparsing) takes 2-3 ms a spec, and
    // twice as many specs took 8 s here alone without finding more.
    for (int i = 0; i < 1500; i++) {
      String spec =
          pick(random, spaces)
              + pick(random, names)
              + pick(random, spaces)
              + pick(random, extras)
              + pick(random, spaces)
              + pick(random, specifiers)
              + pick(random, spaces)
              + pick(random, markers);
      if (random.nextBoolean()) {
        int at = random.nextInt(spec.length() + 1);
        spec =
            random.nextBoolean() || at == spec.length()
                ? spec.substring(0, at)
                    + mutations.charAt(random.nextInt(mutations.length()))
                    + spec.substring(at)
                : spec.substring(0, at) + spec.substring(at + 1);
      }
      try {
        Requirement.parse(spec);
        accepted.add(spec);
      } catch (PysandboxException refused) {
        // only what is accepted here is checked against pip
      }
    }
    assertThat(accepted).hasSizeGreaterThan(600);
    checkWithPip(accepted, dir);
  }

  private static String pick(Random random, String[] from) {
    return from[random.nextInt(from.length)];
  }

  private static void checkWithPip(List<String> specs, Path dir) throws Exception {
    List<Map<String, String>> items = new ArrayList<>();
    List<Requirement> parsed = new ArrayList<>();
    for (String spec : specs) {
      Requirement r = Requirement.parse(spec);
      assertThat(Requirement.parse(r.canonical()).canonical()).as(spec).isEqualTo(r.canonical());
      parsed.add(r);
      items.add(Map.of("spec", spec, "canonical", r.canonical()));
    }
    Path file = dir.resolve("requirements.txt");
    Files.writeString(file, Requirements.requirementsFile(parsed));
    ObjectMapper json = new ObjectMapper();
    HostPython.Result result =
        HostPython.run(
            Duration.ofSeconds(100),
            json.writeValueAsString(items),
            List.of("-c", PIP_CHECK, file.toString()));
    assertThat(result.exit()).as(result.describe()).isZero();
    JsonNode report = json.readTree(result.stdout());

    JsonNode checks = report.get("checks");
    for (int i = 0; i < parsed.size(); i++) {
      Requirement r = parsed.get(i);
      JsonNode c = checks.get(i);
      String spec = items.get(i).get("spec");
      assertThat(c.has("error")).as(spec + ": " + c).isFalse();
      assertThat(c.get("name").asText()).as(spec).isEqualTo(r.normalizedName());
      assertThat(c.get("rawName").asText()).as(spec).isEqualTo(r.normalizedName());
      assertThat(texts(c.get("extras"))).as(spec).isEqualTo(r.extras());
      assertThat(texts(c.get("rawExtras"))).as(spec).isEqualTo(r.extras());
      assertThat(c.get("sameSpecifier").asBoolean()).as(spec + ": " + c).isTrue();
      assertThat(c.get("sameMarker").asBoolean()).as(spec + ": " + c).isTrue();
      assertThat(c.get("url").isNull()).as(spec).isTrue();
    }

    JsonNode lines = report.get("file");
    assertThat(lines).hasSize(parsed.size());
    for (int i = 0; i < parsed.size(); i++) {
      JsonNode line = lines.get(i);
      assertThat(line.get("requirement").asText()).isEqualTo(parsed.get(i).canonical());
      assertThat(line.get("name").asText()).isEqualTo(parsed.get(i).normalizedName());
      assertThat(line.get("link").isNull()).as(line.toString()).isTrue();
      assertThat(line.get("editable").asBoolean()).as(line.toString()).isFalse();
      assertThat(line.get("options").isNull() || line.get("options").isEmpty())
          .as(line.toString())
          .isTrue();
    }
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  /** Reads [{spec, canonical}] on stdin and the requirements file named by argv[1]. */
  private static final String PIP_CHECK =
      """
      import itertools, json, sys
      from pip._vendor.packaging.requirements import Requirement
      from pip._vendor.packaging.utils import canonicalize_name
      from pip._vendor.packaging.markers import default_environment
      from pip._internal.network.session import PipSession
      from pip._internal.req.req_file import parse_requirements
      from pip._internal.req.constructors import install_req_from_parsed_requirement

      envs = []
      for pv, os_name, plat, extra, impl in itertools.product(
              ["2.7", "3.8", "3.12"], ["posix", "nt", "a", "b", "c"], ["linux", "win32"],
              ["", "x", "b"], ["CPython"]):
          e = dict(default_environment())
          e.update(python_version=pv, python_full_version=pv + ".1", os_name=os_name,
                   sys_platform=plat, extra=extra, platform_python_implementation=impl)
          envs.append(e)

      seen = {}

      def marker_same(a, b):
          if a is None or b is None:
              return a is None and b is None
          # The same normalized text is the same marker; only different texts are evaluated in
          # every environment (90 of them for each of ~1500 specs took most of this test's time),
          # and each pair of texts once (the generated specs share a few dozen markers).
          key = (str(a), str(b))
          if key not in seen:
              seen[key] = key[0] == key[1] or all(a.evaluate(e) == b.evaluate(e) for e in envs)
          return seen[key]

      checks = []
      for item in json.load(sys.stdin):
          c = {}
          try:
              raw = Requirement(item["spec"])
              can = Requirement(item["canonical"])
              c["name"] = canonicalize_name(can.name)
              c["rawName"] = canonicalize_name(raw.name)
              c["extras"] = sorted({canonicalize_name(e) for e in can.extras})
              c["rawExtras"] = sorted({canonicalize_name(e) for e in raw.extras})
              c["sameSpecifier"] = raw.specifier == can.specifier
              c["sameMarker"] = marker_same(raw.marker, can.marker)
              c["url"] = can.url
          except Exception as e:
              c["error"] = type(e).__name__ + ": " + str(e)
          checks.append(c)

      lines = []
      for pr in parse_requirements(sys.argv[1], session=PipSession()):
          ireq = install_req_from_parsed_requirement(pr)
          lines.append({"requirement": pr.requirement, "editable": pr.is_editable,
                        "options": pr.options or None,
                        "link": str(ireq.link) if ireq.link else None,
                        "name": canonicalize_name(ireq.name)})
      print(json.dumps({"checks": checks, "file": lines}))
      """;
}
