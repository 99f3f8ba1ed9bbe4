package dev.pysandbox.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * The far side of the egress proxy in tests, on loopback: a tiny Jetty origin and a raw TCP echo
 * server.
 *
 * <ul>
 *   <li>{@code /} answers {@code hello};
 *   <li>{@code /headers} answers the request's headers, one per line;
 *   <li>{@code /big} answers {@link #BIG} bytes of {@code application/octet-stream};
 *   <li>{@code /redirect-big} redirects to {@code /big}, {@code /redirect-evil} to {@code
 *       http://evil.example/x}, {@code /redirect-loop} to itself.
 * </ul>
 */
final class TestOrigin implements AutoCloseable {
  static final int BIG = 1024 * 1024;

  private final Server server = new Server();
  private final ServerSocket echo;
  private final Thread echoAcceptor;

  TestOrigin() throws Exception {
    // No Server header here, so that one seen through the proxy would be the proxy's own.
    HttpConfiguration config = new HttpConfiguration();
    config.setSendServerVersion(false);
    ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(config));
    connector.setHost(InetAddress.getLoopbackAddress().getHostAddress());
    server.addConnector(connector);
    server.setHandler(new Routes());
    server.start();
    echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    echoAcceptor = new Thread(this::acceptEchoes, "test-echo");
    echoAcceptor.setDaemon(true);
    echoAcceptor.start();
  }

  int httpPort() {
    return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
  }

  int echoPort() {
    return echo.getLocalPort();
  }

  String url(String path) {
    return "http://127.0.0.1:" + httpPort() + path;
  }

  private void acceptEchoes() {
    while (!echo.isClosed()) {
      try {
        Socket s = echo.accept();
        Thread t = new Thread(() -> echoUntilEof(s), "test-echo-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void echoUntilEof(Socket s) {
    try (s;
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream()) {
      byte[] buffer = new byte[8192];
      int n;
      while ((n = in.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException ignored) {
      // The tunnel was cut: that is what some tests do.
    }
  }

  @Override
  public void close() throws IOException {
    echo.close();
    try {
      server.stop();
    } catch (Exception e) {
      throw new IOException("the test origin did not stop", e);
    }
  }

  private static final class Routes extends Handler.Abstract {
    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      String path = Request.getPathInContext(request);
      switch (path) {
        case "/" -> text(response, callback, "hello");
        case "/headers" -> {
          StringBuilder out = new StringBuilder();
          for (HttpField field : request.getHeaders()) {
            out.append(field.getName()).append(": ").append(field.getValue()).append('\n');
          }
          text(response, callback, out.toString());
        }
        case "/big" -> {
          byte[] body = new byte[BIG];
          for (int i = 0; i < body.length; i++) {
            body[i] = (byte) i;
          }
          response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
          response.write(true, ByteBuffer.wrap(body), callback);
        }
        case "/redirect-big" -> redirect(response, callback, "/big");
        case "/redirect-evil" -> redirect(response, callback, "http://evil.example/x");
        case "/redirect-loop" -> redirect(response, callback, "/redirect-loop");
        default -> {
          response.setStatus(404);
          text(response, callback, "no such path");
        }
      }
      return true;
    }

    private static void text(Response response, Callback callback, String body) {
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
      response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }

    private static void redirect(Response response, Callback callback, String location) {
      response.setStatus(302);
      response.getHeaders().put(HttpHeader.LOCATION, location);
      response.write(true, ByteBuffer.allocate(0), callback);
    }
  }
}
