package dev.pysandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The floors of CONTRIBUTING.md, checked on the source: which package may use which, no circle
 * between packages, and no core class using a class that builds a concrete backend or store (the
 * server is assembled in one place). Every use counts: an import, and a fully qualified name in the
 * code. Uses that break a rule today are listed in {@link #KNOWN}, each with the issue that removes
 * it; a new one fails the build, and so does a listed one that is gone (so the list only shrinks).
 */
@Fast
class FloorsTest {
  /** Every module's sources, from the checkout's root (the tests' working directory). */
  static final List<String> MODULES =
      List.of(
          "api",
          "sandbox",
          "backend-bwrap",
          "backend-docker",
          "store-jdbc",
          "egress",
          "agent-models",
          "core",
          "faces",
          "app");

  private static final Pattern USE =
      Pattern.compile("\\bdev\\.pysandbox\\.([a-z][a-z.]*)\\.([A-Z]\\w*)");

  /** Package → the packages it may use (besides itself); {@code api.op} is part of {@code api}. */
  private static final Map<String, Set<String>> MAY_USE =
      Map.ofEntries(
          Map.entry("util", Set.of()),
          Map.entry("api", Set.of("util")),
          Map.entry("config", Set.of("api", "util")),
          Map.entry("packages", Set.of("api", "util")),
          Map.entry("notebook", Set.of("api", "util")),
          Map.entry("worker", Set.of("api", "util")),
          Map.entry("egress", Set.of("api", "util")),
          Map.entry("models", Set.of("api", "config", "util")),
          Map.entry("store", Set.of("api", "config", "util")),
          Map.entry("store.jdbc", Set.of("store", "api", "config", "util")),
          Map.entry("backend", Set.of("api", "config", "worker", "util")),
          Map.entry("backend.bwrap", Set.of("backend", "api", "config", "worker", "util")),
          Map.entry("backend.docker", Set.of("backend", "api", "config", "worker", "util")),
          Map.entry("core.files", Set.of("api", "backend", "util")),
          Map.entry("core.diffs", Set.of("api", "util")),
          Map.entry("core.trajectories", Set.of("api", "config", "util", "core.files")),
          Map.entry("core.blobs", Set.of("api", "config", "util", "store", "core.files")),
          Map.entry("core.events", Set.of("api", "worker", "store")),
          Map.entry("core.requests", Set.of("api", "config", "packages")),
          Map.entry(
              "core.host",
              Set.of("api", "config", "util", "backend", "store", "core.files", "core.events")),
          Map.entry(
              "core.sandboxes",
              Set.of("api", "config", "util", "backend", "core.files", "core.blobs")),
          Map.entry(
              "core.audit",
              Set.of(
                  "api",
                  "config",
                  "util",
                  "backend",
                  "store",
                  "notebook",
                  "core.files",
                  "core.host",
                  "core.blobs")),
          Map.entry("core.network", Set.of("api", "config", "backend", "egress", "core.audit")),
          Map.entry(
              "core.environments",
              Set.of(
                  "api",
                  "config",
                  "util",
                  "backend",
                  "worker",
                  "store",
                  "packages",
                  "core.files",
                  "core.sandboxes")),
          Map.entry(
              "core.analysis",
              Set.of("api", "config", "util", "backend", "worker", "core.audit", "core.sandboxes")),
          Map.entry(
              "core.approvals",
              Set.of(
                  "api",
                  "config",
                  "util",
                  "store",
                  "packages",
                  "core.requests",
                  "core.audit",
                  "core.analysis")),
          Map.entry(
              "core.sessions",
              Set.of(
                  "api",
                  "config",
                  "util",
                  "backend",
                  "worker",
                  "store",
                  "core.files",
                  "core.host",
                  "core.requests",
                  "core.sandboxes",
                  "core.environments")),
          Map.entry(
              "core.workspace",
              Set.of(
                  "api",
                  "config",
                  "util",
                  "backend",
                  "store",
                  "egress",
                  "core.files",
                  "core.blobs",
                  "core.requests",
                  "core.network",
                  "core.sessions")),
          Map.entry(
              "core.runs",
              Set.of(
                  "api",
                  "config",
                  "util",
                  "backend",
                  "worker",
                  "store",
                  "egress",
                  "packages",
                  "core.files",
                  "core.blobs",
                  "core.events",
                  "core.requests",
                  "core.sandboxes",
                  "core.audit",
                  "core.network",
                  "core.environments",
                  "core.approvals",
                  "core.sessions")),
          Map.entry(
              "core.agents",
              Set.of(
                  "api", "config", "util", "store", "notebook", "core.audit", "core.trajectories")),
          Map.entry(
              "core",
              Set.of(
                  "core.agents",
                  "core.files",
                  "core.diffs",
                  "core.trajectories",
                  "core.blobs",
                  "core.events",
                  "core.requests",
                  "core.host",
                  "core.sandboxes",
                  "core.audit",
                  "core.network",
                  "core.environments",
                  "core.analysis",
                  "core.approvals",
                  "core.sessions",
                  "core.workspace",
                  "core.runs",
                  "api",
                  "api.op",
                  "config",
                  "packages",
                  "worker",
                  "util",
                  "backend",
                  "store",
                  "egress")),
          Map.entry("mcp", Set.of("api", "config", "util")),
          Map.entry("mcp.http", Set.of("mcp", "api", "config", "util")),
          Map.entry("http", Set.of("api", "config", "mcp", "mcp.http", "util")),
          Map.entry("http.rest", Set.of("http", "api", "config", "util")),
          Map.entry(
              "app",
              Set.of(
                  "api",
                  "config",
                  "util",
                  "worker",
                  "backend",
                  "backend.bwrap",
                  "backend.docker",
                  "store",
                  "store.jdbc",
                  "egress",
                  "models",
                  "core",
                  "core.files")));

  /** Packages whose classes build a concrete part: the core may not use a class that uses them. */
  private static final Set<String> CONCRETE =
      Set.of("backend.bwrap", "backend.docker", "store.jdbc");

  /**
   * Uses that break a rule today, "from class → to class", each with the issue that removes it.
   * Empty since issue 25 moved the assembly of the server into {@code app}: keep it so.
   */
  private static final Set<String> KNOWN = Set.of();

  private static final Map<String, String> PACKAGE_OF = new HashMap<>(); // class → package
  private static final Map<String, Set<String>> USES = new TreeMap<>(); // class → classes

  @BeforeAll
  static void read() throws IOException {
    for (String module : MODULES) {
      Path base = Path.of(module, "src/main/java/dev/pysandbox");
      assertThat(base).as("module %s's sources", module).isDirectory();
      try (Stream<Path> files = Files.walk(base)) {
        for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
          String rel = base.relativize(f).toString();
          String pkg =
              rel.contains("/") ? rel.substring(0, rel.lastIndexOf('/')).replace('/', '.') : "";
          String cls = f.getFileName().toString().replace(".java", "");
          String name = pkg.isEmpty() ? cls : pkg + "." + cls;
          PACKAGE_OF.put(name, pkg.startsWith("api.") ? "api" : pkg);
          Set<String> used = new TreeSet<>();
          Matcher m = USE.matcher(withoutComments(Files.readString(f)));
          while (m.find()) {
            String to = m.group(1) + "." + m.group(2);
            if (!to.equals(name)) {
              used.add(to);
            }
          }
          USES.put(name, used);
        }
      }
    }
  }

  @Test
  void everyPackageUsesOnlyTheFloorsBelowIt() {
    Set<String> broken = new TreeSet<>();
    USES.forEach(
        (from, tos) -> {
          String pkg = PACKAGE_OF.get(from);
          Set<String> may = MAY_USE.get(pkg);
          for (String to : tos) {
            String toPkg = PACKAGE_OF.getOrDefault(to, "?");
            if (may != null && !toPkg.equals(pkg) && !may.contains(toPkg)) {
              broken.add(from + " → " + to);
            }
          }
        });
    assertKnown(broken, "uses against the floors");
  }

  @Test
  void theCoreUsesNoClassThatBuildsAConcreteBackendOrStore() {
    Set<String> broken = new TreeSet<>();
    USES.forEach(
        (from, tos) -> {
          if (!PACKAGE_OF.get(from).equals("core") && !PACKAGE_OF.get(from).startsWith("core.")) {
            return;
          }
          for (String to : tos) {
            String toPkg = PACKAGE_OF.getOrDefault(to, "");
            boolean builds =
                CONCRETE.contains(toPkg)
                    || USES.getOrDefault(to, Set.of()).stream()
                        .anyMatch(u -> CONCRETE.contains(PACKAGE_OF.getOrDefault(u, "")))
                    || to.equals("egress.EgressProxy");
            if (builds) {
              broken.add(from + " → " + to);
            }
          }
        });
    assertKnown(broken, "core classes using what builds a concrete part");
  }

  @Test
  void theFloorsCoverEveryModuleOfTheBuild() throws IOException {
    Matcher m =
        Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(Path.of("pom.xml")));
    List<String> modules = new ArrayList<>();
    while (m.find()) {
      modules.add(m.group(1));
    }
    assertThat(modules).as("pom.xml's modules, as this test reads them").isEqualTo(MODULES);
  }

  /** Module → the modules its pom may name: the floors of CONTRIBUTING.md as the build has them. */
  private static final Map<String, Set<String>> MODULE_MAY_DEPEND =
      Map.of(
          "api", Set.of(),
          "sandbox", Set.of("api"),
          "backend-bwrap", Set.of("sandbox"),
          "backend-docker", Set.of("sandbox"),
          "store-jdbc", Set.of("api"),
          "egress", Set.of(),
          "agent-models", Set.of("api"),
          "core", Set.of("sandbox", "egress"),
          "faces", Set.of("api"),
          "app",
              Set.of(
                  "core",
                  "faces",
                  "backend-bwrap",
                  "backend-docker",
                  "store-jdbc",
                  "agent-models"));

  /**
   * The build is what keeps the floors: a core class importing a backend, a store or the egress
   * proxy must not compile, which holds only while the core's pom does not name those modules.
   */
  @Test
  void eachModuleDependsOnlyOnTheModulesBelowIt() throws IOException {
    Pattern dependency = Pattern.compile("<artifactId>pysandbox-([a-z-]+)</artifactId>");
    for (String module : MODULES) {
      String pom = Files.readString(Path.of(module, "pom.xml"));
      String deps = pom.substring(pom.indexOf("<dependencies>"));
      Set<String> named = new TreeSet<>();
      Matcher m = dependency.matcher(deps);
      while (m.find()) {
        named.add(m.group(1));
      }
      assertThat(named)
          .as("the modules %s's pom depends on", module)
          .isEqualTo(MODULE_MAY_DEPEND.get(module));
    }
  }

  @Test
  void noPackageIsInACircle() {
    Map<String, Set<String>> graph = new TreeMap<>();
    USES.forEach(
        (from, tos) -> {
          for (String to : tos) {
            if (KNOWN.contains(from + " → " + to)) {
              continue;
            }
            String a = PACKAGE_OF.get(from);
            String b = PACKAGE_OF.getOrDefault(to, "");
            if (!a.equals(b) && !b.isEmpty()) {
              graph.computeIfAbsent(a, k -> new TreeSet<>()).add(b);
            }
          }
        });
    List<String> circles = new ArrayList<>();
    for (String start : graph.keySet()) {
      findCircle(graph, start, new ArrayList<>(List.of(start)), new HashSet<>(), circles);
    }
    assertThat(circles).as("circles between packages").isEmpty();
  }

  private static void findCircle(
      Map<String, Set<String>> graph,
      String at,
      List<String> path,
      Set<String> seen,
      List<String> circles) {
    for (String next : graph.getOrDefault(at, Set.of())) {
      if (next.equals(path.get(0))) {
        circles.add(String.join(" → ", path) + " → " + next);
      } else if (!path.contains(next) && seen.add(path.get(0) + ">" + next)) {
        path.add(next);
        findCircle(graph, next, path, seen, circles);
        path.remove(path.size() - 1);
      }
    }
  }

  private static void assertKnown(Set<String> broken, String what) {
    Set<String> fresh = new TreeSet<>(broken);
    fresh.removeAll(KNOWN);
    assertThat(fresh).as("new " + what + " (CONTRIBUTING.md, 'Where things live')").isEmpty();
  }

  @Test
  void everyKnownBreakStillExists_soTheListOnlyShrinks() {
    Set<String> all = new TreeSet<>();
    USES.forEach((from, tos) -> tos.forEach(to -> all.add(from + " → " + to)));
    Set<String> gone = new TreeSet<>(KNOWN);
    gone.removeAll(all);
    assertThat(gone).as("listed in KNOWN but fixed: take them off the list").isEmpty();
  }

  /**
   * The code without comments and string literals: comments name classes of other floors in prose
   * ({@code @link}s too), and a string such as {@code "/*"} must not be read as a comment's start
   * (which would hide the code up to the next comment's end).
   */
  static String withoutComments(String source) {
    StringBuilder out = new StringBuilder(source.length());
    int i = 0;
    int n = source.length();
    while (i < n) {
      char c = source.charAt(i);
      if (source.startsWith("//", i)) {
        i = source.indexOf('\n', i);
        i = i < 0 ? n : i;
      } else if (source.startsWith("/*", i)) {
        int end = source.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
        out.append(' ');
      } else if (source.startsWith("\"\"\"", i)) {
        int end = source.indexOf("\"\"\"", i + 3);
        i = end < 0 ? n : end + 3;
        out.append("\"\"");
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (j < n && source.charAt(j) != c && source.charAt(j) != '\n') {
          j += source.charAt(j) == '\\' ? 2 : 1;
        }
        i = Math.min(n, j + 1);
        out.append(c).append(c);
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  @Test
  void stringsAreNotReadAsComments_andCommentsAreNoUses() {
    String code =
        "filter(\"/*\"); dev.pysandbox.store.jdbc.A a; /* dev.pysandbox.store.jdbc.B */"
            + " // dev.pysandbox.store.jdbc.C\n String s = \"dev.pysandbox.store.jdbc.D\";";
    String kept = withoutComments(code);
    assertThat(kept)
        .contains("dev.pysandbox.store.jdbc.A")
        .doesNotContain("jdbc.B", "jdbc.C", "jdbc.D");
  }
}
