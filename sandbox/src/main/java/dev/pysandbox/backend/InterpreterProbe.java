package dev.pysandbox.backend;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the interpreter once with a fixed script to learn its version, paths and packages. */
public final class InterpreterProbe {
  /**
   * The data-science packages the sandbox is expected to offer, by distribution name: what
   * scripts/setup.sh and scripts/build-image.sh install from Debian ({@link #debianPackage}).
   */
  public static final List<String> EXPECTED_PACKAGES =
      List.of(
          "numpy",
          "pandas",
          "matplotlib",
          "seaborn",
          "scikit-learn",
          "statsmodels",
          "openpyxl",
          "plotly",
          "reportlab");

  private static final String SCRIPT =
      String.join(
          "\n",
          "import json, os, re, sys",
          "out = {'version': sys.version.split()[0],",
          "       'executable': os.path.realpath(sys.executable),",
          "       'base_prefix': sys.base_prefix,",
          "       'path': [p for p in sys.path if p and os.path.isdir(p)], 'packages': {}}",
          "try:",
          "    from importlib import metadata",
          "except ImportError:",
          "    metadata = None",
          "for name in " + pythonList(EXPECTED_PACKAGES) + ":",
          "    try:",
          "        out['packages'][name] = metadata.version(name)",
          "    except Exception:",
          "        out['packages'][name] = None",
          "dists = set()",
          "try:",
          "    for d in metadata.distributions():",
          "        name = d.metadata['Name']",
          "        if name:",
          "            dists.add(re.sub(r'[-_.]+', '-', name).lower() + '==' + str(d.version))",
          "except Exception:",
          "    pass",
          "out['distributions'] = sorted(dists)",
          "print(json.dumps(out))");

  private InterpreterProbe() {}

  /**
   * @throws PysandboxException {@code backend_unavailable} naming the package to install when the
   *     interpreter is missing or broken
   */
  public static InterpreterInfo probe(Path python) {
    if (!Files.isExecutable(python)) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "Python interpreter "
              + python
              + " not found or not executable: install it (Debian: apt-get install python3) or"
              + " set PYSANDBOX_PYTHON");
    }
    try {
      ProcessBuilder pb = new ProcessBuilder(python.toString(), "-I", "-c", SCRIPT);
      pb.environment().clear();
      pb.environment().put("PATH", "/usr/bin:/bin");
      pb.redirectErrorStream(true);
      Process p = pb.start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IOException(new String(out, StandardCharsets.UTF_8).strip());
      }
      return parse(python, new String(out, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "Python interpreter " + python + " did not run: " + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted while probing " + python, e);
    }
  }

  /** The probe, for an interpreter run elsewhere (in a container): {@code python3 -I -c SCRIPT}. */
  public static String script() {
    return SCRIPT;
  }

  /**
   * What the probe printed (its last line is the answer), as facts about {@code python}.
   *
   * @throws IOException when the last line is not the probe's answer
   */
  public static InterpreterInfo parse(Path python, String printed) throws IOException {
    String text = printed.strip();
    JsonNode json = Json.mapper().readTree(text.substring(text.lastIndexOf('\n') + 1));
    if (!json.path("version").isTextual()) {
      throw new IOException("the probe did not answer: " + text);
    }
    List<String> path = new ArrayList<>();
    json.path("path").forEach(n -> path.add(n.asText()));
    Map<String, String> packages = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : json.path("packages").properties()) {
      packages.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText());
    }
    List<String> distributions = new ArrayList<>();
    json.path("distributions").forEach(n -> distributions.add(n.asText()));
    return new InterpreterInfo(
        python,
        json.path("version").asText(),
        Path.of(json.path("executable").asText()),
        Path.of(json.path("base_prefix").asText()),
        List.copyOf(path),
        packages,
        List.copyOf(distributions),
        InterpreterInfo.envHashOf(distributions));
  }

  /** The Debian package that installs a distribution of {@link #EXPECTED_PACKAGES}. */
  public static String debianPackage(String distribution) {
    return distribution.equals("scikit-learn") ? "python3-sklearn" : "python3-" + distribution;
  }

  private static String pythonList(List<String> names) {
    return "[" + String.join(", ", names.stream().map(n -> "'" + n + "'").toList()) + "]";
  }
}
