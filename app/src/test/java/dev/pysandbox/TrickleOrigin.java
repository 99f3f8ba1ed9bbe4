package dev.pysandbox;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A slow origin on loopback, a real peer for the attacks on download_file: {@code /trickle}
 * declares {@value #TRICKLE_BYTES} bytes and sends one a second (as the red team's did) until the
 * client goes away ({@code /trickle?per_second=N}: N bytes a second, for ten minutes); {@code
 * /fast} answers a small body at once. It counts the trickles in progress, so a test can see that a
 * download it ended has let go of the origin too.
 */
public final class TrickleOrigin implements AutoCloseable {
  public static final int TRICKLE_BYTES = 100_000;
  public static final String FAST_BODY = "fast enough\n";

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final AtomicInteger trickling = new AtomicInteger();

  public TrickleOrigin() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(threads);
    server.createContext(
        "/trickle",
        x -> {
          trickling.incrementAndGet();
          String query = x.getRequestURI().getQuery();
          int perSecond =
              query != null && query.startsWith("per_second=")
                  ? Integer.parseInt(query.substring(11))
                  : 1;
          long length = perSecond == 1 ? TRICKLE_BYTES : perSecond * 600L; // ten minutes' worth
          byte[] tick = new byte[perSecond];
          java.util.Arrays.fill(tick, (byte) '.');
          try (OutputStream out = x.getResponseBody()) {
            x.sendResponseHeaders(200, length);
            for (long sent = 0; sent < length; sent += perSecond) {
              out.write(tick);
              out.flush();
              Thread.sleep(1000); // the attack's pace: one byte (or perSecond) a second
            }
          } catch (IOException e) {
            // the client went away: what the tests wait for
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            trickling.decrementAndGet();
            x.close();
          }
        });
    server.createContext(
        "/fast",
        x -> {
          byte[] b = FAST_BODY.getBytes(StandardCharsets.UTF_8);
          x.sendResponseHeaders(200, b.length);
          x.getResponseBody().write(b);
          x.close();
        });
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public String url(String path) {
    return "http://127.0.0.1:" + port() + path;
  }

  /** Trickles in progress: clients the origin still sends to. */
  public int trickling() {
    return trickling.get();
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
    try {
      threads.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
