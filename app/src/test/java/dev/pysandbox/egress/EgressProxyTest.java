package dev.pysandbox.egress;

import static dev.pysandbox.egress.UnixProxyClient.body;
import static dev.pysandbox.egress.UnixProxyClient.exchange;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
@Sandboxed
class EgressProxyTest {
  @TempDir Path temp;

  private final BlockingQueue<EgressAttempt> attempts = new LinkedBlockingQueue<>();
  private final List<AutoCloseable> closers = new ArrayList<>();
  private TestOrigin origin;
  private EgressProxy proxy;

  @BeforeEach
  void start() throws Exception {
    origin = new TestOrigin();
    proxy = new EgressProxy(temp.resolve("egress"));
    proxy.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closers) {
      c.close();
    }
    proxy.close();
    origin.close();
  }

  private EgressProxy.Door openLoopbackDoor() {
    return proxy.open(
        "s-loop",
        EgressPolicy.of(
            List.of("127.0.0.1:" + origin.httpPort(), "127.0.0.1:" + origin.echoPort()), true),
        attempts::add);
  }

  private EgressProxy.Door openStrictDoor() {
    return proxy.open(
        "s-strict",
        EgressPolicy.of(List.of("localhost:" + origin.httpPort(), "pypi.org"), false),
        attempts::add);
  }

  private Forwarder forwarder(EgressProxy.Door door) throws Exception {
    Forwarder f = new Forwarder(temp, door.socket());
    closers.add(0, f);
    return f;
  }

  private EgressAttempt nextAttempt() throws InterruptedException {
    EgressAttempt a = attempts.poll(10, TimeUnit.SECONDS);
    assertThat(a).as("an egress attempt reported within 10 s").isNotNull();
    return a;
  }

  private static String get(String url) {
    return "GET "
        + url
        + " HTTP/1.1\r\nHost: "
        + URI.create(url).getAuthority()
        + "\r\n"
        + "Connection: close\r\n\r\n";
  }

  @Test
  void forwardGet_throughTheForwarder_answersAndReportsOneAttemptWithBytes() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    Forwarder forwarder = forwarder(door);
    HttpClient client =
        HttpClient.newBuilder()
            .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", forwarder.port())))
            .build();

    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(URI.create(origin.url("/"))).build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("hello");
    EgressAttempt a = nextAttempt();
    assertThat(a.method()).isEqualTo("GET");
    assertThat(a.host()).isEqualTo("127.0.0.1");
    assertThat(a.port()).isEqualTo(origin.httpPort());
    assertThat(a.address()).isEqualTo("127.0.0.1");
    assertThat(a.allowed()).isTrue();
    assertThat(a.reason()).isNull();
    assertThat(a.bytesIn()).isEqualTo(5);
    assertThat(attempts.poll(200, TimeUnit.MILLISECONDS)).as("only one attempt").isNull();
  }

  @Test
  void forwardGet_dropsProxyHeadersAndAddsNoneThatRevealTheServer() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    String url = origin.url("/headers");
    String response =
        exchange(
            door.socket(),
            "GET "
                + url
                + " HTTP/1.1\r\nHost: 127.0.0.1:"
                + origin.httpPort()
                + "\r\n"
                + "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
                + "X-Custom: kept\r\nConnection: close\r\n\r\n");

    assertThat(response).startsWith("HTTP/1.1 200");
    assertThat(response.toLowerCase()).doesNotContain("server: jetty");
    String seen = body(response).toLowerCase();
    assertThat(seen).contains("x-custom: kept");
    assertThat(seen)
        .doesNotContain("proxy-authorization")
        .doesNotContain("proxy-connection")
        .doesNotContain("via:")
        .doesNotContain("forwarded")
        .doesNotContain("jetty");
  }

  @Test
  void connectTunnel_throughTheForwarder_echoesAndCountsBytesBothWays() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    Forwarder forwarder = forwarder(door);
    String authority = "127.0.0.1:" + origin.echoPort();
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), forwarder.port())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      out.write(
          ("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(readHead(in)).startsWith("HTTP/1.1 200");

      out.write("ping through the tunnel".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(new String(in.readNBytes(23), StandardCharsets.US_ASCII))
          .isEqualTo("ping through the tunnel");
      s.shutdownOutput();
      assertThat(in.read()).as("the tunnel ends after the echo server does").isEqualTo(-1);
    }
    EgressAttempt a = nextAttempt();
    assertThat(a.method()).isEqualTo("CONNECT");
    assertThat(a.allowed()).isTrue();
    assertThat(a.address()).isEqualTo("127.0.0.1");
    assertThat(a.bytesOut()).isEqualTo(23);
    assertThat(a.bytesIn()).isEqualTo(23);
  }

  private static String readHead(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int c = in.read();
      if (c < 0) {
        break;
      }
      head.append((char) c);
    }
    return head.toString();
  }

  @Test
  void strictPolicy_refusesLoopbackPrivateMetadataAndUnlistedHostsWith403Text() throws Exception {
    EgressProxy.Door door = openStrictDoor();
    int port = origin.httpPort();

    String loopback = exchange(door.socket(), get("http://127.0.0.1:" + port + "/"));
    assertThat(loopback).startsWith("HTTP/1.1 403");
    assertThat(loopback).containsIgnoringCase("Content-Type: text/plain");
    assertThat(body(loopback))
        .isEqualTo("Refused by pysandbox's network policy: '127.0.0.1' is a loopback address\n");

    assertThat(body(exchange(door.socket(), get("http://evil.example/"))))
        .isEqualTo(
            "Refused by pysandbox's network policy: host 'evil.example' is not in the allow-list"
                + " (allowed: localhost:"
                + port
                + ", pypi.org)\n");
    assertThat(body(exchange(door.socket(), get("http://10.1.2.3/"))))
        .contains("'10.1.2.3' is a private address");
    assertThat(body(exchange(door.socket(), get("http://169.254.169.254/latest/meta-data/"))))
        .contains("'169.254.169.254' is a cloud metadata address");

    for (String reason :
        List.of("loopback", "not in the allow-list", "private", "cloud metadata")) {
      EgressAttempt a = nextAttempt();
      assertThat(a.allowed()).isFalse();
      assertThat(a.reason()).contains(reason);
    }
  }

  @Test
  void strictPolicy_refusesANameThatResolvesToLoopback() throws Exception {
    EgressProxy.Door door = openStrictDoor();
    String response = exchange(door.socket(), get("http://localhost:" + origin.httpPort() + "/"));

    assertThat(response).startsWith("HTTP/1.1 403");
    assertThat(body(response))
        .startsWith("Refused by pysandbox's network policy: 'localhost' resolves to ")
        .contains("a loopback address");
    EgressAttempt a = nextAttempt();
    assertThat(a.allowed()).isFalse();
    assertThat(a.address()).isIn("127.0.0.1", "::1");
  }

  @Test
  void connect_toARefusedHost_answers403AndOpensNoTunnel() throws Exception {
    EgressProxy.Door door = openStrictDoor();
    try (SocketChannel channel = UnixProxyClient.connect(door.socket())) {
      UnixProxyClient.write(
          channel, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n");
      String response = new String(UnixProxyClient.readToEnd(channel), StandardCharsets.ISO_8859_1);
      assertThat(response).startsWith("HTTP/1.1 403");
      assertThat(body(response)).contains("host 'evil.example' is not in the allow-list");
    }
    EgressAttempt a = nextAttempt();
    assertThat(a.method()).isEqualTo("CONNECT");
    assertThat(a.allowed()).isFalse();
    assertThat(a.bytesOut()).isZero();
  }

  @Test
  void rebinding_aNameWithAnyPrivateAnswerIsRefused() throws Exception {
    EgressProxy rebinding =
        new EgressProxy(
            temp.resolve("egress2"),
            host ->
                host.equals("rebind.example")
                    ? new InetAddress[] {
                      InetAddress.getByName("93.184.216.34"), InetAddress.getByName("10.0.0.5")
                    }
                    : InetAddress.getAllByName(host),
            Clock.systemUTC());
    closers.add(rebinding);
    rebinding.start();
    EgressProxy.Door door =
        rebinding.open(
            "s-rebind", EgressPolicy.of(List.of("rebind.example"), false), attempts::add);

    String response = exchange(door.socket(), get("http://rebind.example/"));

    assertThat(body(response))
        .isEqualTo(
            "Refused by pysandbox's network policy:"
                + " 'rebind.example' resolves to 10.0.0.5, a private address\n");
    assertThat(nextAttempt().address()).isEqualTo("10.0.0.5");
  }

  @Test
  void pinning_connectsToTheCheckedAddressWithoutASecondLookup() throws Exception {
    // "pinned.example" exists only in this resolver: a request or tunnel that reaches the origin
    // proves the proxy connected to the address it checked and never asked the system resolver.
    java.util.concurrent.atomic.AtomicInteger lookups =
        new java.util.concurrent.atomic.AtomicInteger();
    EgressProxy pinning =
        new EgressProxy(
            temp.resolve("egress3"),
            host -> {
              lookups.incrementAndGet();
              return host.equals("pinned.example")
                  ? new InetAddress[] {InetAddress.getByName("127.0.0.1")}
                  : InetAddress.getAllByName(host);
            },
            Clock.systemUTC());
    closers.add(pinning);
    pinning.start();
    EgressProxy.Door door =
        pinning.open(
            "s-pin",
            EgressPolicy.of(
                List.of(
                    "pinned.example:" + origin.httpPort(), "pinned.example:" + origin.echoPort()),
                true),
            attempts::add);

    String url = "http://pinned.example:" + origin.httpPort() + "/";
    assertThat(body(exchange(door.socket(), get(url)))).isEqualTo("hello");
    assertThat(lookups.get()).isEqualTo(1);
    try (SocketChannel tunnel =
        UnixProxyClient.tunnel(door.socket(), "pinned.example:" + origin.echoPort())) {
      UnixProxyClient.write(tunnel, "pin");
      assertThat(UnixProxyClient.read(tunnel, 3)).isEqualTo("pin");
    }
    assertThat(lookups.get()).isEqualTo(2);
    assertThat(nextAttempt().address()).isEqualTo("127.0.0.1");
  }

  @Test
  void pythonUrllib_withHttpProxyEnvironment_fetchesThroughTheForwarder() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    Forwarder forwarder = forwarder(door);
    ProcessBuilder pb =
        new ProcessBuilder(
            Forwarder.PYTHON,
            "-c",
            "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1],"
                + " timeout=20).read().decode())",
            origin.url("/"));
    pb.environment().keySet().removeIf(k -> k.toLowerCase().endsWith("_proxy"));
    pb.environment().put("HTTP_PROXY", "http://127.0.0.1:" + forwarder.port());
    pb.environment().put("http_proxy", "http://127.0.0.1:" + forwarder.port());
    pb.redirectErrorStream(true);
    Process python = pb.start();
    String out = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

    assertThat(python.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(python.exitValue()).as(out).isZero();
    assertThat(out).isEqualTo("hello");
    assertThat(nextAttempt().allowed()).isTrue();
  }

  @Test
  void twoDoors_eachEnforcesItsOwnPolicy() throws Exception {
    EgressProxy.Door open = openLoopbackDoor();
    EgressProxy.Door strict = openStrictDoor();
    assertThat(open.socket()).isNotEqualTo(strict.socket());

    assertThat(exchange(open.socket(), get(origin.url("/")))).startsWith("HTTP/1.1 200");
    assertThat(exchange(strict.socket(), get(origin.url("/")))).startsWith("HTTP/1.1 403");
    assertThat(strict.policy().allowPrivate()).isFalse();
  }

  @Test
  void closingADoor_deletesItsSocketAndBreaksItsOpenTunnel() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    try (SocketChannel tunnel =
        UnixProxyClient.tunnel(door.socket(), "127.0.0.1:" + origin.echoPort())) {
      UnixProxyClient.write(tunnel, "abc");
      assertThat(UnixProxyClient.read(tunnel, 3)).isEqualTo("abc");

      door.close();

      assertThat(door.socket()).doesNotExist();
      assertThat(UnixProxyClient.readToEnd(tunnel)).isEmpty();
    }
    EgressAttempt a = nextAttempt();
    assertThat(a.method()).isEqualTo("CONNECT");
    assertThat(a.bytesOut()).isEqualTo(3);
    assertThatThrownBy(() -> UnixProxyClient.connect(door.socket()))
        .isInstanceOf(IOException.class);
  }

  @Test
  void aDoor_refusesThe17thConcurrentConnectionWith429() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    String authority = "127.0.0.1:" + origin.echoPort();
    List<SocketChannel> open = new ArrayList<>();
    try {
      for (int i = 0; i < EgressProxy.MAX_OPEN_PER_DOOR; i++) {
        open.add(UnixProxyClient.tunnel(door.socket(), authority));
      }
      try (SocketChannel extra = UnixProxyClient.connect(door.socket())) {
        UnixProxyClient.write(
            extra, "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
        String response = new String(UnixProxyClient.readToEnd(extra), StandardCharsets.ISO_8859_1);
        assertThat(response).startsWith("HTTP/1.1 429");
        assertThat(body(response)).contains("limit 16");
      }
      EgressAttempt refused = nextAttempt();
      assertThat(refused.allowed()).isFalse();
      assertThat(refused.reason()).contains("limit 16");

      open.remove(0).close();
      nextAttempt();
      try (SocketChannel again = UnixProxyClient.tunnel(door.socket(), authority)) {
        UnixProxyClient.write(again, "x");
        assertThat(UnixProxyClient.read(again, 1)).isEqualTo("x");
      }
    } finally {
      for (SocketChannel c : open) {
        c.close();
      }
    }
  }

  @Test
  void aDoor_withMaxIdleConnections_servesNoMoreUntilOneCloses() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    List<SocketChannel> idle = new ArrayList<>();
    try {
      for (int i = 0; i < EgressProxy.MAX_CONNECTIONS_PER_DOOR; i++) {
        idle.add(UnixProxyClient.connect(door.socket()));
      }
      // Each idle connection must be accepted before the next is counted: one answered request
      // on the last proves all were.
      SocketChannel last = idle.get(idle.size() - 1);
      UnixProxyClient.write(last, get(origin.url("/")).replace("Connection: close\r\n", ""));
      assertThat(UnixProxyClient.readHead(last)).startsWith("HTTP/1.1 200");

      try (SocketChannel extra = UnixProxyClient.connect(door.socket())) {
        UnixProxyClient.write(extra, get(origin.url("/")));
        extra.configureBlocking(false);
        try (Selector answer = Selector.open()) {
          extra.register(answer, SelectionKey.OP_READ);
          // Half a second of nothing (an answer would end the wait at once and fail here).
          assertThat(answer.select(500))
              .as("no answer while the door is at its connection limit")
              .isZero();
        }
        extra.configureBlocking(true);

        idle.remove(0).close();

        assertThat(UnixProxyClient.readHead(extra)).startsWith("HTTP/1.1 200");
      }
    } finally {
      for (SocketChannel c : idle) {
        c.close();
      }
    }
  }

  @Test
  void forward_answers400ToANonHttpSchemeAnd413ToAnOversizedBody() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    String ftp =
        exchange(door.socket(), "GET ftp://127.0.0.1/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assertThat(ftp).startsWith("HTTP/1.1 400");
    assertThat(body(ftp)).contains("only http:// and https://");

    String big =
        exchange(
            door.socket(),
            "POST "
                + origin.url("/")
                + " HTTP/1.1\r\nHost: 127.0.0.1:"
                + origin.httpPort()
                + "\r\n"
                + "Content-Length: "
                + (EgressProxy.MAX_REQUEST_BODY + 1)
                + "\r\n\r\n");
    assertThat(big).startsWith("HTTP/1.1 413");
    assertThat(nextAttempt().reason()).contains("over the limit");
  }

  @Test
  void download_streamsTheBodyAndRecordsItsContentType() throws Exception {
    EgressPolicy policy = EgressPolicy.of(List.of("127.0.0.1:" + origin.httpPort()), true);
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    EgressProxy.Download d =
        proxy.download(
            URI.create(origin.url("/redirect-big")),
            policy,
            2 * TestOrigin.BIG,
            Duration.ofSeconds(20),
            out,
            attempts::add);

    assertThat(d.status()).isEqualTo(200);
    assertThat(d.contentType()).isEqualTo("application/octet-stream");
    assertThat(d.bytes()).isEqualTo(TestOrigin.BIG);
    assertThat(d.finalUrl()).isEqualTo(URI.create(origin.url("/big")));
    assertThat(out.size()).isEqualTo(TestOrigin.BIG);
    assertThat(out.toByteArray()[1000]).isEqualTo((byte) 1000);
    assertThat(nextAttempt().method()).isEqualTo("DOWNLOAD");
    assertThat(nextAttempt().bytesIn()).isEqualTo(TestOrigin.BIG);
  }

  /**
   * Regression (issue 24, item 4): an allowed origin sending a byte a second kept the download (and
   * its caller's thread) for the whole timeout. It now fails once the grace has passed.
   */
  @Test
  void download_fromAnOriginUnderTheMinimumRate_failsAfterTheGrace_andLetsGoOfIt()
      throws Exception {
    try (dev.pysandbox.TrickleOrigin slow = new dev.pysandbox.TrickleOrigin()) {
      EgressPolicy policy = EgressPolicy.of(List.of("127.0.0.1:" + slow.port()), true);
      assertThatThrownBy(
              () ->
                  proxy.download(
                      URI.create(slow.url("/trickle")),
                      policy,
                      1 << 20,
                      Duration.ofSeconds(120),
                      new EgressProxy.MinimumRate(1024, Duration.ofSeconds(2)),
                      OutputStream.nullOutputStream(),
                      attempts::add))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("under the minimum of 1024")
          .hasMessageContaining("http_min_data_rate");
      dev.pysandbox.Await.until("the origin sees the download end", slow::trickling, n -> n == 0);
      // A fast origin under the same minimum is fetched as before.
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      proxy.download(
          URI.create(slow.url("/fast")),
          policy,
          1 << 20,
          Duration.ofSeconds(20),
          new EgressProxy.MinimumRate(1024, Duration.ofSeconds(2)),
          out,
          EgressListener.NONE);
      assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8))
          .isEqualTo(dev.pysandbox.TrickleOrigin.FAST_BODY);
    }
  }

  @Test
  void download_overMaxBytes_failsNamingTheLimit() {
    EgressPolicy policy = EgressPolicy.of(List.of("127.0.0.1:" + origin.httpPort()), true);
    assertThatThrownBy(
            () ->
                proxy.download(
                    URI.create(origin.url("/big")),
                    policy,
                    100 * 1024,
                    Duration.ofSeconds(20),
                    OutputStream.nullOutputStream(),
                    attempts::add))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("limit of 102400 bytes");
  }

  @Test
  void download_refusesARedirectToARefusedHostAFileUrlAndALoop() throws Exception {
    EgressPolicy policy = EgressPolicy.of(List.of("127.0.0.1:" + origin.httpPort()), true);
    assertThatThrownBy(
            () ->
                proxy.download(
                    URI.create(origin.url("/redirect-evil")),
                    policy,
                    1024,
                    Duration.ofSeconds(20),
                    OutputStream.nullOutputStream(),
                    attempts::add))
        .isInstanceOf(EgressProxy.EgressRefused.class)
        .satisfies(
            e ->
                assertThat(((EgressProxy.EgressRefused) e).reason())
                    .startsWith("host 'evil.example' is not in the allow-list"));
    assertThat(nextAttempt().allowed()).isTrue();
    assertThat(nextAttempt().allowed()).isFalse();

    assertThatThrownBy(
            () ->
                proxy.download(
                    URI.create("file:///etc/passwd"),
                    policy,
                    1024,
                    Duration.ofSeconds(5),
                    OutputStream.nullOutputStream(),
                    attempts::add))
        .isInstanceOf(EgressProxy.EgressRefused.class)
        .hasMessageContaining("only http and https");

    assertThatThrownBy(
            () ->
                proxy.download(
                    URI.create(origin.url("/redirect-loop")),
                    policy,
                    1024,
                    Duration.ofSeconds(20),
                    OutputStream.nullOutputStream(),
                    EgressListener.NONE))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("more than 5 times");
  }

  @Test
  void socketDirectoryIs0711AndDoorSocketsAre0666() throws Exception {
    EgressProxy.Door door = openLoopbackDoor();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(temp.resolve("egress"))))
        .isEqualTo("rwx--x--x");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(door.socket())))
        .isEqualTo("rw-rw-rw-");
    assertThat(door.socket().getParent()).isEqualTo(temp.resolve("egress"));
  }

  @Test
  void closingTheProxy_closesEveryDoor() throws Exception {
    EgressProxy.Door a = openLoopbackDoor();
    EgressProxy.Door b = openStrictDoor();
    proxy.close();
    assertThat(a.socket()).doesNotExist();
    assertThat(b.socket()).doesNotExist();
    assertThatThrownBy(() -> openLoopbackDoor()).isInstanceOf(IllegalStateException.class);
  }
}
