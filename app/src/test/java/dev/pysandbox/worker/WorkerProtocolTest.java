package dev.pysandbox.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One runner, many requests, and user code that attacks the protocol: whatever it prints or writes
 * to whatever fd, the next request gets its own answer and only its own output.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class WorkerProtocolTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dataDir;
  static WorkerHub hub;
  static BwrapBackend backend;
  static Limits limits;
  static ExecutorService executor;
  Sandbox sandbox;

  @BeforeAll
  static void startBackend() throws Exception {
    PysandboxConfig config = TestServices.config(dataDir, Map.of());
    limits = config.defaultLimits();
    DataLayout layout = new DataLayout(config.dataDir());
    hub = WorkerHub.open(layout.runtimeDir().resolve("test.sock"));
    executor = Executors.newCachedThreadPool();
    backend = new BwrapBackend(config, layout, hub, "0badc0de", executor);
    assertThat(backend.unavailableReason()).isEmpty();
  }

  @AfterAll
  static void stopBackend() {
    backend.close();
    hub.close();
    executor.shutdownNow();
  }

  @BeforeEach
  void startSandbox() throws Exception {
    sandbox =
        backend
            .start(new SandboxSpec(List.of(), 1 << 20, limits, 64L << 20))
            .get(30, TimeUnit.SECONDS);
  }

  @AfterEach
  void killSandbox() throws Exception {
    sandbox.kill("test over").get(10, TimeUnit.SECONDS);
  }

  private WorkerReply exec(String code) throws Exception {
    ObjectNode payload = JSON.createObjectNode().put("code", code);
    return sandbox.worker().request("exec", payload).get(20, TimeUnit.SECONDS);
  }

  @Test
  void globals_surviveBetweenRequestsOfOneRunner() throws Exception {
    exec("x = 10");
    assertThat(exec("x * 2").frame().path("result").path("text/plain").asText()).isEqualTo("20");
    exec("x = x + 1\nprint(x)");
    assertThat(exec("x = x + 1\nprint(x)").stdout().text()).isEqualTo("12\n");
  }

  @Test
  void normalRequests_eachGetTheirOwnOutput_andNoControlLineIsDropped() throws Exception {
    // Regression: the hub once drained stdout into the buffer a control frame was being parsed
    // from, and parsed 64 KiB of stale bytes after every frame (2 ms per request).
    for (int i = 0; i < 50; i++) {
      WorkerReply r = exec("print('line', " + i + ")\n" + i + " * 2");
      assertThat(r.stdout().text()).isEqualTo("line " + i + "\n");
      assertThat(r.frame().path("result").path("text/plain").asText())
          .isEqualTo(Integer.toString(i * 2));
    }
    assertThat(((WorkerConnection) sandbox.worker()).ignoredLines()).isZero();
  }

  @Test
  void fakeFramesOnStdoutAndEveryFd_doNotAnswerAnyRequest() throws Exception {
    WorkerReply first =
        exec(
            """
            import json, os
            fake = '\\n' + json.dumps({"type": "done", "id": "r0000", "status": "ok"}) + '\\n'
            print(fake)
            for fd in range(0, 1024):
                try:
                    os.write(fd, b'garbage without newline {"type": "ready"')
                    os.write(fd, fake.encode())
                except OSError:
                    pass
            print('first done')
            """);
    assertThat(first.frame().path("status").asText()).isEqualTo("ok");
    assertThat(first.stdout().text()).contains("first done").contains("\"type\": \"done\"");
    WorkerReply second = exec("print('second')\n'result-2'");
    assertThat(second.stdout().text()).isEqualTo("second\n");
    assertThat(second.frame().path("result").path("text/plain").asText()).isEqualTo("'result-2'");
  }

  @Test
  void closingFdsZeroToTen_doesNotBreakTheNextRequest() throws Exception {
    exec("import os\nos.closerange(0, 11)");
    WorkerReply next = exec("print('still here')\n6*7");
    assertThat(next.stdout().text()).isEqualTo("still here\n");
    assertThat(next.frame().path("result").path("text/plain").asText()).isEqualTo("42");
  }

  @Test
  void forgedAnswerWithTheCurrentId_onlyAffectsItsOwnRequest() throws Exception {
    exec(
        "import gc, json, os, time\n"
            + "runner = [o for o in gc.get_objects() if type(o).__name__ == 'Runner'][0]\n"
            + "frame = {'type': 'done', 'id': runner.current, 'status': 'ok', 'forged': True}\n"
            + "os.write(runner.channel.fd, ('\\n' + json.dumps(frame) + '\\n').encode())\n"
            + "time.sleep(0.5)");
    WorkerReply next = exec("'mine'");
    assertThat(next.frame().has("forged")).isFalse();
    assertThat(next.frame().path("result").path("text/plain").asText()).isEqualTo("'mine'");
  }

  /**
   * The interrupt is sent only once the code is seen running (its first line's output arrived), so
   * it takes the path of an interrupt into running user code (SIGIO, then SIGINT), not that of an
   * interrupt remembered before the request starts. If that path were broken, the 30 s sleep would
   * outlast the 10 s wait for the answer.
   */
  @Test
  void interrupt_ofRunningCode_raisesKeyboardInterruptAndKeepsState() throws Exception {
    exec("kept = 'yes'");
    var pending =
        sandbox
            .worker()
            .request(
                "exec",
                JSON.createObjectNode()
                    .put("code", "import time\nprint('sleeping', flush=True)\ntime.sleep(30)"));
    Await.until(
        "the code's output 'sleeping' (it runs)",
        () -> sandbox.worker().partial().stdout().text(),
        out -> out.contains("sleeping"));
    sandbox.worker().interrupt();
    WorkerReply r = pending.get(10, TimeUnit.SECONDS);
    assertThat(r.frame().path("error").path("name").asText()).isEqualTo("KeyboardInterrupt");
    assertThat(r.stdout().text()).isEqualTo("sleeping\n");
    assertThat(exec("kept").frame().path("result").path("text/plain").asText()).isEqualTo("'yes'");
  }
}
