package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network tier and download_file through the egress proxy, against an origin the test serves on
 * loopback (allowed only because {@code network_allow_private} is on, as for a private index): an
 * allowed host is reached by plain {@code urllib} (HTTP_PROXY is set) and through a CONNECT tunnel,
 * anything else gets the policy's 403, every attempt is a security event, and a session may narrow
 * the allow-list but never widen it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class NetworkTierTest {
  @TempDir static Path dataDir;
  HttpServer origin;
  HttpServer other;
  DefaultSandboxService service;
  int port;
  int otherPort;

  @BeforeAll
  void start() throws Exception {
    origin = serve("hello from the origin\n");
    other = serve("you should not see this\n");
    port = origin.getAddress().getPort();
    otherPort = other.getAddress().getPort();
    service =
        TestServices.start(
            dataDir,
            Map.of(
                "pool_size",
                "0",
                "index_url",
                "",
                "tiers_allowed",
                "basic,network",
                "network_allow",
                "127.0.0.1:" + port,
                "network_allow_private",
                "true"));
  }

  static final java.util.concurrent.atomic.AtomicInteger originRequests =
      new java.util.concurrent.atomic.AtomicInteger();

  private static HttpServer serve(String body) throws Exception {
    HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    s.createContext(
        "/big",
        x -> {
          // Declares more than download_max_mb (50 MiB) and sends nothing: refused on the header.
          x.sendResponseHeaders(200, 60L << 20);
          x.close();
        });
    s.createContext(
        "/",
        x -> {
          originRequests.incrementAndGet();
          byte[] b = body.getBytes(StandardCharsets.UTF_8);
          x.getResponseHeaders().add("Content-Type", "text/csv");
          x.sendResponseHeaders(200, b.length);
          x.getResponseBody().write(b);
          x.close();
        });
    s.start();
    return s;
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
    origin.stop(0);
    other.stop(0);
  }

  private RunRecord run(String code, String session) {
    return service.run(new ExecutionRequest(code, session, null, 60));
  }

  private static final String FETCH =
      "import urllib.request, urllib.error\n"
          + "def fetch(url):\n"
          + "    try:\n"
          + "        with urllib.request.urlopen(url, timeout=10) as r:\n"
          + "            return r.status, r.read().decode()\n"
          + "    except urllib.error.HTTPError as e:\n"
          + "        return e.code, e.read().decode()\n"
          + "    except Exception as e:\n"
          + "        return 0, repr(e)\n";

  @Test
  void aNetworkSession_reachesAnAllowedHost_andGetsThePolicys403_forAnyOther() {
    service.createSession("net1", null, LimitRequest.DEFAULTS, "network", List.of());
    try {
      RunRecord r =
          run(
              FETCH
                  + "print(fetch('http://127.0.0.1:"
                  + port
                  + "/'))\n"
                  + "print(fetch('http://127.0.0.1:"
                  + otherPort
                  + "/'))\n"
                  + "print(fetch('http://10.1.2.3/'))\n"
                  + "print(fetch('http://169.254.169.254/latest/meta-data/'))\n",
              "net1");
      String[] lines = r.stdout().split("\n");
      assertThat(
              run(
                      "import ssl; print(len(ssl.create_default_context(cafile="
                          + "'/etc/ssl/certs/ca-certificates.crt').get_ca_certs()) > 10)",
                      "net1")
                  .stdout())
          .as("the CA certificates are there for TLS through the proxy")
          .contains("True");
      assertThat(lines[0]).contains("200").contains("hello from the origin");
      assertThat(lines[1]).contains("403").contains("Refused by pysandbox's network policy");
      assertThat(lines[1]).doesNotContain("you should not see this");
      // network_allow_private is on here (the origin is on loopback): the allow-list refuses it.
      assertThat(lines[2]).contains("403").contains("not in the allow-list");
      assertThat(lines[3]).contains("403");
      List<SecurityEvent> events =
          service
              .listSecurityEvents(new SecurityEventQuery(null, null, "net1", 100, null))
              .events();
      assertThat(events).anyMatch(e -> e.kind().equals("network_allowed"));
      assertThat(events)
          .as("an attempt made while a run is in flight names the run")
          .anyMatch(e -> r.runId().equals(e.runId()));
      assertThat(events.stream().filter(e -> e.kind().equals("network_denied")).count())
          .isGreaterThanOrEqualTo(3);
    } finally {
      service.closeSession("net1");
    }
  }

  @Test
  void aForwarderTheCodeKilled_isBackForTheNextRun() {
    service.createSession("net4", null, LimitRequest.DEFAULTS, "network", List.of());
    try {
      RunRecord killed =
          run(
              "import os, signal, time\n"
                  + "n = 0\n"
                  + "for p in os.listdir('/proc'):\n"
                  + "    if p.isdigit():\n"
                  + "        try:\n"
                  + "            args = open('/proc/%s/cmdline' % p, 'rb').read().split(bytes(1))\n"
                  + "            if any(a.endswith(b'egress_forward.py') for a in args):\n"
                  + "                os.kill(int(p), signal.SIGKILL); n += 1\n"
                  + "        except OSError:\n"
                  + "            pass\n"
                  + "time.sleep(0.2)\n"
                  + FETCH
                  + "print(n, fetch('http://127.0.0.1:"
                  + port
                  + "/')[0])",
              "net4");
      assertThat(killed.stdout())
          .as("%s %s", killed.error(), killed.message())
          .matches("[1-9] 0\\s*");
      RunRecord next = run(FETCH + "print(fetch('http://127.0.0.1:" + port + "/'))", "net4");
      assertThat(next.stdout()).contains("200").contains("hello from the origin");
    } finally {
      service.closeSession("net4");
    }
  }

  @Test
  void aConnectTunnel_toAnAllowedHost_carriesBytesBothWays() {
    service.createSession("net2", null, LimitRequest.DEFAULTS, "network", List.of());
    try {
      RunRecord r =
          run(
              "import socket\n"
                  + "s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
                  + "s.sendall(b'CONNECT 127.0.0.1:"
                  + port
                  + " HTTP/1.1\\r\\nHost: 127.0.0.1:"
                  + port
                  + "\\r\\n\\r\\n')\n"
                  + "head = s.recv(4096)\n"
                  + "print(head.split(b'\\r\\n')[0].decode())\n"
                  + "s.sendall(b'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')\n"
                  + "data = b''\n"
                  + "while True:\n"
                  + "    b = s.recv(4096)\n"
                  + "    if not b: break\n"
                  + "    data += b\n"
                  + "print(data.decode().split('\\r\\n\\r\\n', 1)[1])\n",
              "net2");
      assertThat(r.stdout()).as(r.stderr()).contains(" 200").contains("hello from the origin");
    } finally {
      service.closeSession("net2");
    }
  }

  @Test
  void aSession_mayNarrowTheAllowList_butNeverWidenIt() {
    assertThatThrownBy(
            () ->
                service.createSession(
                    "net3",
                    null,
                    LimitRequest.DEFAULTS,
                    "network",
                    List.of(),
                    List.of("example.com")))
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("example.com");
    assertThatThrownBy(
            () ->
                service.createSession(
                    "net3", null, LimitRequest.DEFAULTS, "basic", List.of(), List.of("127.0.0.1")))
        .hasMessageContaining("network_allow");
    service.createSession(
        "net3", null, LimitRequest.DEFAULTS, "network", List.of(), List.of("127.0.0.1:" + port));
    try {
      RunRecord r = run(FETCH + "print(fetch('http://127.0.0.1:" + port + "/'))", "net3");
      assertThat(r.stdout()).contains("200");
    } finally {
      service.closeSession("net3");
    }
  }

  @Test
  void downloadFile_fetchesThroughThePolicy_intoTheSession_andRefusesOtherHosts() {
    var d =
        service.downloadFile("dl1", "http://127.0.0.1:" + port + "/data.csv", "data.csv", false);
    try {
      assertThat(d.sizeBytes()).isEqualTo("hello from the origin\n".length());
      assertThat(d.contentType()).isEqualTo("text/csv");
      assertThat(d.sha256()).hasSize(64);
      assertThat(run("print(open('/mnt/data/data.csv').read())", "dl1").stdout())
          .contains("hello from the origin");
      int before = originRequests.get();
      assertThatThrownBy(
              () ->
                  service.downloadFile(
                      "dl1", "http://127.0.0.1:" + port + "/data.csv", "data.csv", false))
          .satisfies(
              e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.FILE_EXISTS));
      assertThat(originRequests.get())
          .as("nothing fetched for a file that exists")
          .isEqualTo(before);
      assertThatThrownBy(
              () ->
                  service.downloadFile(
                      "dl1", "http://127.0.0.1:" + otherPort + "/", "x.csv", false))
          .satisfies(
              e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.FORBIDDEN))
          .hasMessageContaining("network policy");
      assertThatThrownBy(
              () -> service.downloadFile("dl1", "http://127.0.0.1:" + port + "/big", "b", false))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.ARTIFACT_TOO_LARGE);
                assertThat(e.retryable()).isFalse();
              })
          .hasMessageContaining("over the limit");
      assertThatThrownBy(() -> service.downloadFile("dl1", "file:///etc/passwd", "p", false))
          .satisfies(
              e ->
                  assertThat(((PysandboxException) e).code())
                      .isEqualTo(ErrorCode.INVALID_ARGUMENT));
      assertThatThrownBy(
              () ->
                  service.downloadFile("dl1", "http://127.0.0.1:" + port + "/", "../escape", false))
          .satisfies(
              e ->
                  assertThat(((PysandboxException) e).code())
                      .isEqualTo(ErrorCode.INVALID_ARGUMENT));
    } finally {
      service.closeSession("dl1");
    }
  }

  @Test
  void aBasicSession_inTheSameServer_stillHasNoWayOut() {
    RunRecord r =
        run(
            "import os\nprint(os.environ.get('HTTP_PROXY'),"
                + " os.path.exists('/run/pysandbox/egress.sock'))",
            null);
    assertThat(r.stdout()).contains("None False");
  }
}
