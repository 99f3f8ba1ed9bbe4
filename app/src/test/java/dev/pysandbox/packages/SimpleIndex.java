package dev.pysandbox.packages;

import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A PEP 503 simple repository on {@code 127.0.0.1} (an ephemeral port) serving the wheels of a
 * directory, for tests that install packages with real pip and no network: {@code /simple/} lists
 * the projects, {@code /simple/<normalized>/} a project's wheels as anchors with {@code #sha256=}
 * fragments, {@code /files/<file>} serves a wheel. The directory is read on every request, so
 * wheels built after the start are served too.
 *
 * <p>Counts requests per path ({@link #requests}), so a test can assert how often pip came; can
 * answer 503 to everything ({@link #unavailable}) to stand for an unreachable index. Threads are
 * daemons; {@link #close()} stops the server.
 */
public final class SimpleIndex implements AutoCloseable {
  private final Path dir;
  private final Server server;
  private final ServerConnector connector;
  private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
  private volatile boolean unavailable;
  private volatile long stallMillis;

  private SimpleIndex(Path dir) {
    this.dir = dir;
    QueuedThreadPool threads = new QueuedThreadPool(16, 2);
    threads.setName("simple-index");
    threads.setDaemon(true);
    server = new Server(threads);
    connector = new ServerConnector(server, 1, 1);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(new IndexHandler());
    server.setStopTimeout(0); // no graceful wait on idle keep-alive connections
  }

  /** Starts serving the {@code *.whl} files of {@code dir}. */
  public static SimpleIndex serve(Path dir) throws Exception {
    SimpleIndex index = new SimpleIndex(dir);
    index.server.start();
    return index;
  }

  /** {@code http://127.0.0.1:<port>/simple/}, what pip's {@code --index-url} takes. */
  public URI url() {
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/simple/");
  }

  /** How many requests came for paths starting with {@code pathPrefix} ({@code /files/x-1.0}). */
  public int requests(String pathPrefix) {
    return requests.entrySet().stream()
        .filter(e -> e.getKey().startsWith(pathPrefix))
        .mapToInt(e -> e.getValue().get())
        .sum();
  }

  /** While {@code true}, every request is answered 503 Service Unavailable. */
  public void unavailable(boolean unavailable) {
    this.unavailable = unavailable;
  }

  /** While above 0, every request waits this long before it is answered (a hanging index). */
  public void stall(long millis) {
    this.stallMillis = millis;
  }

  /** Stops the server. */
  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("the simple index did not stop", e);
    }
  }

  /** The project a wheel belongs to: its file name's first part, normalised (PEP 503). */
  static String project(String wheelFile) {
    return RequirementParser.normalize(wheelFile.substring(0, wheelFile.indexOf('-')));
  }

  /** Wheel file names by project, each project's sorted. */
  private Map<String, List<String>> wheels() {
    try (Stream<Path> files = Files.list(dir)) {
      Map<String, List<String>> byProject = new TreeMap<>();
      files
          .map(p -> p.getFileName().toString())
          .filter(f -> f.endsWith(".whl") && f.indexOf('-') > 0)
          .sorted()
          .forEach(f -> byProject.computeIfAbsent(project(f), k -> new ArrayList<>()).add(f));
      return byProject;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String page(String title, CharSequence anchors) {
    return "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">"
        + "<title>"
        + title
        + "</title></head><body><h1>"
        + title
        + "</h1>\n"
        + anchors
        + "</body></html>\n";
  }

  private final class IndexHandler extends Handler.Abstract {
    @Override
    public boolean handle(Request request, Response response, Callback callback)
        throws IOException {
      String path = Request.getPathInContext(request);
      requests.computeIfAbsent(path, k -> new AtomicInteger()).incrementAndGet();
      long stall = stallMillis;
      if (stall > 0) {
        try {
          Thread.sleep(stall);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (unavailable) {
        Response.writeError(request, response, callback, HttpStatus.SERVICE_UNAVAILABLE_503);
        return true;
      }
      if (!request.getMethod().equals("GET")) {
        Response.writeError(request, response, callback, HttpStatus.METHOD_NOT_ALLOWED_405);
        return true;
      }
      Map<String, List<String>> wheels = wheels();
      if (path.equals("/simple/")) {
        StringBuilder anchors = new StringBuilder();
        wheels
            .keySet()
            .forEach(p -> anchors.append("<a href=\"/simple/" + p + "/\">" + p + "</a><br/>\n"));
        send(response, callback, "text/html; charset=utf-8", utf8(page("Simple index", anchors)));
      } else if (path.startsWith("/simple/")) {
        String name = path.substring("/simple/".length()).replaceAll("/$", "");
        String normalized = RequirementParser.normalize(name);
        List<String> files = wheels.get(normalized);
        if (name.contains("/") || files == null) {
          Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
        } else if (!path.equals("/simple/" + normalized + "/")) {
          Response.sendRedirect(
              request,
              response,
              callback,
              HttpStatus.MOVED_PERMANENTLY_301,
              "/simple/" + normalized + "/",
              false);
        } else {
          StringBuilder anchors = new StringBuilder();
          for (String f : files) {
            String sha256 = Sha256.hex(Files.readAllBytes(dir.resolve(f)));
            anchors.append(
                "<a href=\"/files/" + f + "#sha256=" + sha256 + "\">" + f + "</a><br/>\n");
          }
          send(
              response,
              callback,
              "text/html; charset=utf-8",
              utf8(page("Links for " + normalized, anchors)));
        }
      } else if (path.startsWith("/files/")
          && wheels.values().stream()
              .anyMatch(l -> l.contains(path.substring("/files/".length())))) {
        byte[] wheel = Files.readAllBytes(dir.resolve(path.substring("/files/".length())));
        send(response, callback, "application/octet-stream", wheel);
      } else {
        Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
      }
      return true;
    }

    private void send(Response response, Callback callback, String type, byte[] body) {
      response.setStatus(HttpStatus.OK_200);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
      response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
      response.write(true, ByteBuffer.wrap(body), callback);
    }

    private static byte[] utf8(String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
  }
}
