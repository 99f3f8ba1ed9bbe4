package dev.pysandbox.http;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.server.handler.CrossOriginHandler;

/**
 * CORS for the origins {@code allowed_origins} names, and no other: Jetty's handler in front of the
 * servlet context (preflights are answered there, without a key), with the request and answer
 * headers the HTTP face's clients use.
 */
final class CorsPolicy {
  private CorsPolicy() {}

  static CrossOriginHandler handler(List<String> origins, ServletContextHandler context) {
    CrossOriginHandler cors = new CrossOriginHandler();
    Set<String> patterns = new LinkedHashSet<>();
    origins.forEach(o -> patterns.add(Pattern.quote(o)));
    cors.setAllowedOriginPatterns(patterns);
    cors.setAllowedMethods(Set.of("GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"));
    cors.setAllowedHeaders(
        Set.of(
            "Authorization",
            "X-API-Key",
            "Content-Type",
            "Accept",
            "Mcp-Session-Id",
            "Mcp-Protocol-Version",
            "Last-Event-ID",
            RequestFilter.REQUEST_ID_HEADER));
    cors.setExposedHeaders(
        Set.of(
            "Mcp-Session-Id", RequestFilter.REQUEST_ID_HEADER, "Retry-After", "WWW-Authenticate"));
    cors.setAllowCredentials(false);
    cors.setHandler(context);
    return cors;
  }
}
