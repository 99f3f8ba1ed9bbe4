package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.core.audit.SecurityEventLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Tiers in real sandboxes: the import policy of basic (the exact message, every way of importing,
 * the data stack unharmed, a security event per denial), data_science's limits, the filesystem
 * tier's read-only host directory, the codes for tiers that are unknown, not allowed or not
 * available, and a session that keeps its tier.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class TiersTest {
  static final String DENIED = "import of 'socket' is not allowed in tier 'basic'";

  @TempDir static Path dataDir;
  @TempDir static Path hostDir;
  DefaultSandboxService service;
  ListAppender<ILoggingEvent> events;
  Logger eventLogger;
  Level eventLevel;

  @BeforeAll
  void start() throws Exception {
    // The sandboxes run as other host users: the directory they are shown must be theirs to read.
    Files.setPosixFilePermissions(hostDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    // Writable by anyone as far as permissions go, so that only the read-only mount can refuse.
    Path shared = Files.createDirectories(hostDir.resolve("shared"));
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.writeString(shared.resolve("data.csv"), "a,b\n1,2\n");
    Files.setPosixFilePermissions(
        shared.resolve("data.csv"), PosixFilePermissions.fromString("rw-rw-rw-"));
    Path tiers = Files.writeString(hostDir.resolve("tiers.json"), "{\"extra\": {}}");
    service =
        TestServices.start(
            dataDir,
            Map.of(
                "pool_size",
                "1",
                "max_sessions",
                "6",
                "fs_mounts",
                "shared=" + shared,
                "tiers_file",
                tiers.toString()));
    // SecurityEventLog is a placeholder that logs each event; its log is what is observed here.
    eventLogger = (Logger) LoggerFactory.getLogger(SecurityEventLog.class);
    eventLevel = eventLogger.getLevel();
    eventLogger.setLevel(Level.INFO);
    events = new ListAppender<>();
    events.start();
    eventLogger.addAppender(events);
  }

  @AfterAll
  void stop() {
    eventLogger.detachAppender(events);
    eventLogger.setLevel(eventLevel);
    service.close();
  }

  RunRecord run(String code, String session, String tier) {
    return service.run(new ExecutionRequest(code, session, null, 60, tier, null, false, List.of()));
  }

  static ErrorCode codeOf(Throwable t) {
    return ((PysandboxException) t).code();
  }

  @Test
  void socket_inBasic_isDeniedWithTheExactMessage_whicheverWayItIsImported() {
    service.createSession("imports", null, LimitRequest.DEFAULTS, "basic");
    for (String code :
        List.of(
            "import socket",
            "from socket import *",
            "__import__('socket')",
            "import importlib\nimportlib.import_module('socket')",
            "exec('import socket')",
            "import pandas\nimport socket")) {
      RunRecord r = run(code, "imports", null);
      assertThat(r.status()).as(code).isEqualTo(RunStatus.FAILED);
      assertThat(r.error().name()).as(code).isEqualTo("ImportError");
      assertThat(r.error().value()).as(code).isEqualTo(DENIED);
      assertThat(r.error().traceback())
          .as(code)
          .endsWith("ImportError: " + DENIED + "\n")
          .doesNotContain("runner.py");
      assertThat(r.tier()).isEqualTo("basic");
    }
    RunRecord caught =
        run(
            "try:\n    import ctypes\nexcept ImportError as e:\n    print(e)\n"
                + "from urllib import request",
            "imports",
            null);
    assertThat(caught.stdout()).isEqualTo("import of 'ctypes' is not allowed in tier 'basic'\n");
    assertThat(caught.error().value())
        .isEqualTo("import of 'urllib.request' is not allowed in tier 'basic'");
    RunRecord fine = run("import urllib.parse, json, math\nmath.sqrt(4)", "imports", null);
    assertThat(fine.status()).isEqualTo(RunStatus.SUCCEEDED);
    service.closeSession("imports");
  }

  @Test
  void dataStack_stillImportsAndWorks_inBasic() {
    RunRecord r =
        run(
            "import numpy as np, pandas as pd, matplotlib.pyplot as plt\n"
                + "df = pd.DataFrame({'x': np.arange(5), 'y': np.arange(5) ** 2})\n"
                + "df.to_csv('out.csv', index=False)\n"
                + "df.plot(x='x', y='y')\n"
                + "print(pd.read_csv('out.csv')['y'].sum())\n"
                + "df.describe().to_html()[:6]",
            null,
            null);
    assertThat(r.status()).as(String.valueOf(r.error())).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("30\n");
    assertThat(r.displays()).singleElement().satisfies(d -> assertThat(d).containsKey("image/png"));
    assertThat(r.tier()).isEqualTo("basic");
  }

  @Test
  void deniedImport_recordsASecurityEvent_withModuleAndTier() {
    RunRecord r = run("import ssl", null, null);
    assertThat(r.error().value()).isEqualTo("import of 'ssl' is not allowed in tier 'basic'");
    List<SecurityEvent> denied =
        service
            .listSecurityEvents(
                new dev.pysandbox.api.SecurityEventQuery(
                    null, SecurityEvent.Kind.IMPORT_DENIED, null, 100, null))
            .events()
            .stream()
            .filter(e -> r.runId().equals(e.runId()))
            .toList();
    assertThat(denied).singleElement();
    assertThat(denied.get(0).sessionId()).isNull();
    assertThat(denied.get(0).detail()).isEqualTo(Map.of("module", "ssl", "tier", "basic"));
  }

  @Test
  void dataScience_getsItsLargerDefaultLimits() {
    RunRecord r = run("print('ok')", null, "data_science");
    assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.tier()).isEqualTo("data_science");
    assertThat(r.limits())
        .containsEntry("memory_limit_mb", 2048L)
        .containsEntry("pids_limit", 256)
        .containsEntry("cpu_limit", 2.0);
    RunRecord stored = service.getRun(r.runId(), false);
    assertThat(stored.tier()).isEqualTo("data_science");
    assertThat(stored.limits()).containsEntry("memory_limit_mb", 2048);
    RunRecord basic = run("print('ok')", null, null);
    assertThat(basic.limits()).containsEntry("memory_limit_mb", 512L);
    RunRecord again =
        service.rerun(
            new dev.pysandbox.api.RerunRequest(r.runId(), null, null, null, null),
            dev.pysandbox.api.RunListener.NONE);
    assertThat(again.tier()).as("a one-shot re-run keeps the tier").isEqualTo("data_science");
    assertThat(again.limits()).containsEntry("memory_limit_mb", 2048L);
    RunRecord denied = run("import socket", null, "data_science");
    assertThat(denied.error().value())
        .isEqualTo("import of 'socket' is not allowed in tier 'data_science'");
  }

  @Test
  void filesystemTier_showsTheHostDirectoryReadOnly_andBasicDoesNot() {
    RunRecord r =
        run(
            "import os\n"
                + "print(os.listdir('/mnt/host'), open('/mnt/host/shared/data.csv').read())\n"
                + "for name, act in [\n"
                + "    ('create', lambda: open('/mnt/host/shared/new.txt', 'w')),\n"
                + "    ('modify', lambda: open('/mnt/host/shared/data.csv', 'a')),\n"
                + "    ('delete', lambda: os.remove('/mnt/host/shared/data.csv')),\n"
                + "    ('mkdir', lambda: os.mkdir('/mnt/host/shared/d')),\n"
                + "    ('rename', lambda: os.rename('/mnt/host/shared/data.csv',"
                + " '/mnt/host/shared/y')),\n"
                + "    ('chmod', lambda: os.chmod('/mnt/host/shared/data.csv', 0o777)),\n"
                + "]:\n"
                + "    try:\n"
                + "        act()\n"
                + "        print(name, 'worked')\n"
                + "    except OSError as e:\n"
                + "        print(name, e.errno)\n",
            null,
            "filesystem");
    assertThat(r.status()).as(String.valueOf(r.error())).isEqualTo(RunStatus.SUCCEEDED);
    // EROFS (30) for every change, though the permissions would let anyone write.
    assertThat(r.stdout())
        .isEqualTo(
            "['shared'] a,b\n1,2\n\n"
                + "create 30\nmodify 30\ndelete 30\nmkdir 30\nrename 30\nchmod 30\n");
    assertThat(r.tier()).isEqualTo("filesystem");
    assertThat(hostDir.resolve("shared/data.csv")).hasContent("a,b\n1,2\n");
    assertThat(hostDir.resolve("shared/new.txt")).doesNotExist();
    RunRecord basic = run("import os\nprint(os.path.exists('/mnt/host'))", null, "basic");
    assertThat(basic.stdout()).isEqualTo("False\n");
  }

  @Test
  void tiers_unknownNotAllowedOrNotAvailable_areRefusedWithTheirCodes_beforeAnythingIsMade() {
    int sessionsBefore = service.listSessions().size();
    assertThatThrownBy(() -> run("print(1)", null, "gpu"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("unknown tier 'gpu'")
        .hasMessageContaining("basic, data_science, filesystem, network, extra");
    assertThatThrownBy(() -> run("print(1)", null, "extra"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN))
        .hasMessageContaining("tier 'extra' is not allowed on this server");
    assertThatThrownBy(() -> run("print(1)", null, "network"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN))
        .hasMessageContaining("tier 'network' is not allowed on this server");
    assertThatThrownBy(() -> service.createSession("nope", null, LimitRequest.DEFAULTS, "network"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN));
    assertThatThrownBy(() -> service.createSession("nope", null, LimitRequest.DEFAULTS, "extra"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN));
    assertThatThrownBy(() -> run("print(1)", "nope", "extra"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN));
    assertThatThrownBy(
            () ->
                service.start(
                    new ExecutionRequest("1", null, null, 5, "gpu", null, false, List.of()),
                    dev.pysandbox.api.RunListener.NONE))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThat(service.listSessions()).hasSize(sessionsBefore);
  }

  @Test
  void session_keepsItsTier_acrossRuns_andRefusesAnother() {
    SessionInfo s = service.createSession("ds", null, LimitRequest.DEFAULTS, "data_science");
    assertThat(s.tier()).isEqualTo("data_science");
    assertThat(s.limits()).containsEntry("memory_limit_mb", 2048L);
    assertThat(run("x = 1", "ds", null).tier()).isEqualTo("data_science");
    assertThat(run("x + 1", "ds", "data_science").result()).containsEntry("text/plain", "2");
    assertThatThrownBy(() -> run("x", "ds", "basic"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("the session's tier is data_science");
    assertThatThrownBy(() -> service.createSession("ds", null, LimitRequest.DEFAULTS, "basic"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("the session's tier is data_science");
    assertThat(service.createSession("ds", null, LimitRequest.DEFAULTS, null).tier())
        .isEqualTo("data_science");
    assertThat(service.listSessions())
        .filteredOn(i -> i.sessionId().equals("ds"))
        .singleElement()
        .satisfies(i -> assertThat(i.tier()).isEqualTo("data_science"));
    // A session made by run_python on a new id takes the call's tier; limits asked for go on top.
    assertThat(run("print(1)", "fs", "filesystem").tier()).isEqualTo("filesystem");
    assertThat(run("import os\nos.listdir('/mnt/host')", "fs", null).result())
        .containsEntry("text/plain", "['shared']");
    SessionInfo small =
        service.createSession(
            "small", null, new LimitRequest(1024, null, null, null), "data_science");
    assertThat(small.limits())
        .containsEntry("memory_limit_mb", 1024L)
        .containsEntry("pids_limit", 256);
    for (String id : List.of("ds", "fs", "small")) {
      service.closeSession(id);
    }
  }

  @Test
  void checkSetup_listsTheTiers_theirPolicies_andTheMaxima() {
    SetupReport r = service.checkSetup();
    assertThat(r.tiers()).containsEntry("default", "basic");
    assertThat(r.tiers().get("allowed")).isEqualTo(List.of("basic", "data_science", "filesystem"));
    assertThat(r.tiers().get("maxima").toString()).contains("memory_limit_mb=4096");
    Map<?, ?> all = (Map<?, ?>) r.tiers().get("tiers");
    assertThat(List.copyOf(all.keySet()))
        .isEqualTo(List.of("basic", "data_science", "filesystem", "network", "extra"));
    Map<?, ?> fs = (Map<?, ?>) all.get("filesystem");
    assertThat(fs.get("allowed")).isEqualTo(true);
    assertThat(fs.get("network")).isEqualTo("none");
    assertThat(fs.get("mounts").toString()).contains("/mnt/host/shared").contains("ro");
    Map<?, ?> net = (Map<?, ?>) all.get("network");
    assertThat(net.get("available")).isEqualTo(true);
    assertThat(net.get("allowed")).isEqualTo(false);
    assertThat(((Map<?, ?>) all.get("extra")).get("allowed")).isEqualTo(false);
    assertThat(((Map<?, ?>) ((Map<?, ?>) all.get("basic")).get("imports")).get("deny").toString())
        .contains("socket");
  }
}
