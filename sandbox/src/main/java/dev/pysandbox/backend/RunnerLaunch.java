package dev.pysandbox.backend;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.Json;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How every backend starts the runner, whatever holds it: where its files appear in the sandbox,
 * the only environment the code sees, and the options on the runner's command line (its import
 * path, package environment, way out, preloads and import policy).
 */
public final class RunnerLaunch {
  /** The workspace, the code's working directory. */
  public static final String WORKSPACE = "/mnt/data";

  /** Where the runner, and the files it loads, appear in a sandbox. */
  public static final String DIR = "/opt/pysandbox";

  public static final String RUNNER = DIR + "/runner.py";

  /** The code analyser, next to the runner, which loads it for the {@code analyze} operation. */
  public static final String ANALYZER = DIR + "/analyzer.py";

  /** The egress forwarder, started by the runner in sandboxes that have a way out. */
  public static final String FORWARDER = DIR + "/egress_forward.py";

  private static final ObjectMapper JSON = Json.mapper();

  private RunnerLaunch() {}

  /**
   * The only environment the code sees: nothing of the server's; the package environment's {@code
   * bin} first on {@code PATH}; the proxy variables when the sandbox has a way out.
   */
  public static Map<String, String> environment(SandboxSpec.Environment packages, boolean egress) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put(
        "PATH",
        (packages == null ? "" : SandboxSpec.Environment.TARGET + "/bin:")
            + "/usr/local/bin:/usr/bin:/bin");
    env.put("HOME", "/tmp");
    env.put("TMPDIR", "/tmp");
    env.put("LANG", "C.UTF-8");
    env.put("USER", "sandbox");
    env.put("MPLBACKEND", "Agg");
    env.put("MPLCONFIGDIR", "/tmp/.matplotlib");
    env.put("PYTHONDONTWRITEBYTECODE", "1");
    if (egress) {
      String proxy = "http://127.0.0.1:" + SandboxSpec.Egress.PORT;
      for (String name : List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")) {
        env.put(name, proxy);
      }
      env.put("NO_PROXY", "");
      env.put("no_proxy", "");
    }
    return env;
  }

  /**
   * The runner's command-line options (one JSON argument).
   *
   * @param sysPath the interpreter's import path (the runner starts with {@code -S})
   * @param connect where and as whom the runner connects its channels itself ({@code socket},
   *     {@code sandbox}, {@code token}), or {@code null} when it inherits them connected
   */
  public static String options(
      List<String> sysPath, SandboxSpec spec, boolean egress, Map<String, String> connect) {
    Map<String, Object> options = new LinkedHashMap<>();
    if (connect != null) {
      options.put("connect", connect);
    }
    options.put("path", sysPath);
    SandboxSpec.Environment env = spec.environment();
    if (env != null && env.sitePackages() != null) {
      options.put("site", env.sitePackages());
    }
    if (egress) {
      Map<String, Object> way = new LinkedHashMap<>();
      way.put("forwarder", FORWARDER);
      way.put("port", SandboxSpec.Egress.PORT);
      way.put("socket", SandboxSpec.Egress.SOCKET);
      options.put("egress", way);
    }
    options.put("preload", spec.preload());
    SandboxSpec.Imports imports = spec.imports();
    if (!imports.isNone()) {
      Map<String, Object> policy = new LinkedHashMap<>();
      policy.put("tier", imports.tier());
      policy.put("deny", imports.deny());
      policy.put("allow", imports.allow());
      options.put("imports", policy);
    }
    try {
      return JSON.writeValueAsString(options);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
