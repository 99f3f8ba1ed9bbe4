package dev.pysandbox.core.environments;

import dev.pysandbox.api.Json;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.PysandboxConfig;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The Python an environment build runs in its sandbox: {@code python3 -m venv
 * --system-site-packages --without-pip} at {@value SandboxSpec.Environment#TARGET}, then the
 * system's pip (seen through the system site-packages) installing the requirements file into it,
 * from the configured index (through the egress proxy) and/or the wheelhouse bound at {@code
 * /mnt/host/wheels}; then it prints one line {@code @@pysandbox-env {json}} with the site-packages
 * directory, {@code pip freeze} and the distributions code will see. Every value that comes from
 * outside (requirements, URLs) enters the script as a JSON string literal, which is a valid Python
 * string literal.
 */
final class BuildScript {
  /** A line the build prints for an index it could not reach after pip failed. */
  static final String UNREACHABLE_MARK = "@@pysandbox-index-unreachable ";

  private BuildScript() {}

  static String of(PysandboxConfig config, String requirementsFile) {
    List<String> sourceArgs = new ArrayList<>();
    List<String> indexes = new ArrayList<>();
    Set<String> trusted = new LinkedHashSet<>();
    URI index = config.indexUrl();
    if (index != null) {
      sourceArgs.add("--index-url");
      sourceArgs.add(index.toString());
      indexes.add(index.toString());
      if ("http".equalsIgnoreCase(index.getScheme())) {
        trusted.add(index.getHost());
      }
      for (URI extra : config.extraIndexUrls()) {
        sourceArgs.add("--extra-index-url");
        sourceArgs.add(extra.toString());
        indexes.add(extra.toString());
        if ("http".equalsIgnoreCase(extra.getScheme())) {
          trusted.add(extra.getHost());
        }
      }
      for (String host : trusted) {
        sourceArgs.add("--trusted-host");
        sourceArgs.add(host);
      }
    } else {
      sourceArgs.add("--no-index");
    }
    if (config.findLinks() != null) {
      sourceArgs.add("--find-links");
      sourceArgs.add(SandboxSpec.HostMount.ROOT + "/wheels");
    }
    return String.join(
        "\n",
        "import json, os, subprocess, sys",
        "ENV = " + Json.write(SandboxSpec.Environment.TARGET),
        "REQUIREMENTS = " + Json.write(requirementsFile),
        "SOURCES = " + Json.write(sourceArgs),
        "INDEXES = " + Json.write(indexes),
        "env = dict(os.environ, PIP_CONFIG_FILE='/dev/null', PIP_NO_INPUT='1',"
            + " PIP_DISABLE_PIP_VERSION_CHECK='1', PYTHONDONTWRITEBYTECODE='1')",
        "with open('/tmp/requirements.txt', 'w') as f:",
        "    f.write(REQUIREMENTS)",
        "def step(what, args):",
        "    code = subprocess.run(args, env=env, stdin=subprocess.DEVNULL).returncode",
        "    if code != 0:",
        "        raise RuntimeError(what + ' failed (exit code ' + str(code) + ')')",
        "step('python3 -m venv', [sys.executable, '-m', 'venv', '--system-site-packages',"
            + " '--without-pip', ENV])",
        "py = ENV + '/bin/python'",
        "print('installing: ' + ' '.join(REQUIREMENTS.split()), flush=True)",
        "def reachable(url):",
        "    import urllib.request",
        "    try:",
        "        with urllib.request.urlopen(url, timeout=20) as r:",
        "            return 200 <= r.status < 400, str(r.status)",
        "    except Exception as e:",
        "        return False, str(e)[:300]",
        "try:",
        "    step('pip install', [py, '-m', 'pip', 'install', '--no-cache-dir', '--progress-bar',"
            + " 'off', '--no-warn-script-location', '--retries', '2', '--timeout', '20', '-r',"
            + " '/tmp/requirements.txt'] + SOURCES)",
        "except RuntimeError:",
        "    # pip says an index answered 503 only at debug level: ask each index itself.",
        "    for url in INDEXES:",
        "        ok, why = reachable(url)",
        "        if not ok:",
        "            print('" + UNREACHABLE_MARK + "' + url + ' ' + why, flush=True)",
        "    raise",
        "probe = r'''",
        "import json, re, sys, sysconfig",
        "from importlib import metadata",
        "seen = {}",
        "for d in metadata.distributions():",
        "    name = d.metadata['Name']",
        "    if name:",
        "        key = re.sub(r'[-_.]+', '-', name).lower()",
        "        seen.setdefault(key, key + '==' + str(d.version))",
        "print(json.dumps({'site_packages': sysconfig.get_paths()['purelib'],"
            + " 'distributions': sorted(seen.values())}))",
        "'''",
        "facts = json.loads(subprocess.run([py, '-I', '-c', probe], env=env, check=True,"
            + " capture_output=True, text=True).stdout)",
        "freeze = subprocess.run([py, '-m', 'pip', 'freeze', '--local'], env=env, check=True,"
            + " capture_output=True, text=True).stdout",
        "facts['pip_freeze'] = freeze",
        "print('@@pysandbox-env ' + json.dumps(facts), flush=True)");
  }
}
