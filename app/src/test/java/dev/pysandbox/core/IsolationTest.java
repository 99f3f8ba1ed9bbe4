package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What code inside the sandbox can and cannot reach. Each probe prints one verdict line. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class IsolationTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  @BeforeAll
  static void start() {
    service = TestServices.start(dataDir, TestServices.withoutImportPolicy(dataDir, Map.of()));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  private static String probe(String code) {
    RunRecord r = service.run(ExecutionRequest.of(code));
    assertThat(r.status()).as(r.stderr() + r.message()).isEqualTo(RunStatus.SUCCEEDED);
    return r.stdout().strip();
  }

  private static String attempt(String action) {
    return probe(
        "try:\n    "
            + action.replace("\n", "\n    ")
            + "\n    print('ALLOWED')\nexcept OSError as e:\n    print('DENIED', e.errno)");
  }

  /** Every way out over the network is tried in {@link EscapeSuiteTest}; here: no interface. */
  @Test
  void network_onlyLoopbackExists() {
    assertThat(
            probe(
                "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))"))
        .isEqualTo("['lo']");
  }

  @Test
  void filesystem_hostSecretsAreInvisibleAndSystemIsReadOnly() {
    assertThat(attempt("open('/etc/shadow').read()")).isEqualTo("DENIED 2");
    assertThat(attempt("import os\nos.listdir('/root')")).isEqualTo("DENIED 2");
    assertThat(attempt("import os\nos.listdir('/home')")).isEqualTo("DENIED 2");
    assertThat(attempt("open('/usr/x', 'w')")).isEqualTo("DENIED 30");
    assertThat(attempt("open('/etc/passwd', 'a')")).startsWith("DENIED");
    assertThat(attempt("open('/x', 'w')")).startsWith("DENIED");
    assertThat(attempt("import os\nos.listdir('" + dataDir + "')")).isEqualTo("DENIED 2");
    assertThat(attempt("import os\nos.listdir('" + Path.of("").toAbsolutePath() + "')"))
        .as("the checkout is not visible")
        .isEqualTo("DENIED 2");
    assertThat(attempt("open('/mnt/data/x', 'w').write('1')")).isEqualTo("ALLOWED");
    assertThat(attempt("open('/tmp/x', 'w').write('1')")).isEqualTo("ALLOWED");
    assertThat(probe("import os\nprint(os.getcwd())")).isEqualTo("/mnt/data");
  }

  @Test
  void processes_onlyTheSandboxIsVisible_andNothingIsPrivileged() {
    assertThat(
            probe("import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"))
        .isEqualTo("[1, 2]");
    String status =
        probe(
            "import os\nlines = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
                + "print(os.getuid(), os.getgid(), lines['CapEff'].strip(), lines['CapBnd'].strip(),"
                + " lines['NoNewPrivs'].strip())");
    assertThat(status).isEqualTo("1000 1000 0000000000000000 0000000000000000 1");
    assertThat(probe("import socket\nprint(socket.gethostname())")).isEqualTo("sandbox");
    assertThat(attempt("import os\nos.kill(" + ProcessHandle.current().pid() + ", 0)"))
        .isEqualTo("DENIED 3");
  }

  @Test
  void environment_holdsNothingOfTheServers() {
    String env = probe("import os\nprint(sorted(os.environ))");
    assertThat(env)
        .isEqualTo(
            "['HOME', 'LANG', 'MPLBACKEND', 'MPLCONFIGDIR', 'PATH', 'PWD', 'PYTHONDONTWRITEBYTECODE',"
                + " 'TMPDIR', 'USER']");
    assertThat(probe("print(open('/proc/1/environ', 'rb').read().count(b'PYSANDBOX'))"))
        .isEqualTo("0");
  }

  @Test
  void dataStack_isImportable() {
    assertThat(
            probe(
                "import numpy, pandas, matplotlib\nimport matplotlib.pyplot as plt\n"
                    + "print(matplotlib.get_backend())"))
        .isEqualToIgnoringCase("agg");
  }
}
