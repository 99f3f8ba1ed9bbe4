package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.function.IntSupplier;

/**
 * The DNS-rebinding guard: a request whose {@code Host} is not one this server answers to, or whose
 * {@code Origin} (sent by browsers) is neither this server's own nor an allowed one, is refused
 * with 403 before anything else looks at it. The health checks are exempt: they show nothing.
 */
final class OriginFilter extends HttpFilter {
  private static final long serialVersionUID = 1L;

  private final transient List<String> allowedHosts;
  private final transient List<String> allowedOrigins;
  private final String boundHost;
  private final transient IntSupplier port;

  /**
   * @param allowedHosts {@code host} (any port) or {@code host:port}, lower case; empty for the
   *     bound address, localhost and 127.0.0.1 on the bound port
   * @param allowedOrigins {@code scheme://host[:port]}, lower case, besides the same origin
   * @param port the port actually bound (known once the server has started)
   */
  OriginFilter(
      List<String> allowedHosts, List<String> allowedOrigins, String boundHost, IntSupplier port) {
    this.allowedHosts = List.copyOf(allowedHosts);
    this.allowedOrigins = List.copyOf(allowedOrigins);
    this.boundHost = boundHost.toLowerCase(Locale.ROOT);
    this.port = port;
  }

  @Override
  protected void doFilter(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (AuthFilter.isHealthCheck(request)) {
      chain.doFilter(request, response);
      return;
    }
    String host = request.getHeader("Host");
    if (host == null || !hostAllowed(host.toLowerCase(Locale.ROOT))) {
      ErrorBodies.send(
          response,
          ErrorCode.FORBIDDEN,
          "Host "
              + PysandboxException.quote(host)
              + " is not one this server answers to (setting allowed_hosts)");
      return;
    }
    String origin = request.getHeader("Origin");
    if (origin != null && !originAllowed(origin.toLowerCase(Locale.ROOT), host)) {
      ErrorBodies.send(
          response,
          ErrorCode.FORBIDDEN,
          "Origin "
              + PysandboxException.quote(origin)
              + " may not call this server (setting allowed_origins)");
      return;
    }
    chain.doFilter(request, response);
  }

  boolean hostAllowed(String host) {
    int colon = host.lastIndexOf(':');
    boolean hasPort = colon > host.lastIndexOf(']');
    String name = hasPort ? host.substring(0, colon) : host;
    String withPort = hasPort ? host : host + ":80";
    if (allowedHosts.isEmpty()) {
      int p = port.getAsInt();
      return withPort.equals(boundHostForHeader() + ":" + p)
          || withPort.equals("localhost:" + p)
          || withPort.equals("127.0.0.1:" + p)
          || withPort.equals("[::1]:" + p);
    }
    for (String allowed : allowedHosts) {
      boolean allowedHasPort = allowed.lastIndexOf(':') > allowed.lastIndexOf(']');
      if (allowedHasPort ? allowed.equals(withPort) : allowed.equals(name)) {
        return true;
      }
    }
    return false;
  }

  private boolean originAllowed(String origin, String host) {
    return origin.equals("http://" + host.toLowerCase(Locale.ROOT))
        || allowedOrigins.contains(origin);
  }

  private String boundHostForHeader() {
    return boundHost.contains(":") && !boundHost.startsWith("[")
        ? "[" + boundHost + "]"
        : boundHost;
  }
}
