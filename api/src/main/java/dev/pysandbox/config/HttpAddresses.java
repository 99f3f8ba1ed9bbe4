package dev.pysandbox.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What the HTTP face's address settings may hold: {@code http_host} (a host name or IP address),
 * {@code allowed_hosts} (host or host:port, as in a Host header) and {@code allowed_origins}
 * (scheme://host[:port]); and whether a host is loopback, which decides if {@code http_auth=none}
 * is allowed. Plain patterns, no name looked up.
 */
final class HttpAddresses {
  /** A host name, an IPv4 address or a bracketed IPv6 address, as in a Host header. */
  private static final String HOST_PART =
      "(?:\\[[0-9a-f:.]+\\]|[a-z0-9_](?:[a-z0-9._-]*[a-z0-9_])?)";

  /** What http_host may be: a host part, or an IPv6 address without brackets. */
  private static final Pattern HOST =
      Pattern.compile(HOST_PART + "|[0-9a-f.]*:[0-9a-f:.]*", Pattern.CASE_INSENSITIVE);

  private static final Pattern HOST_PORT = Pattern.compile(HOST_PART + "(?::[0-9]{1,5})?");
  private static final Pattern ORIGIN =
      Pattern.compile("https?://" + HOST_PART + "(?::[0-9]{1,5})?");

  private HttpAddresses() {}

  /** {@code http_host}. */
  static String host(SettingValues v) {
    String host = v.string(Setting.HTTP_HOST);
    if (!HOST.matcher(host).matches()) {
      throw v.bad(Setting.HTTP_HOST, "not a host name or IP address");
    }
    return host;
  }

  /** {@code allowed_hosts}, lower case. */
  static List<String> allowedHosts(SettingValues v) {
    List<String> hosts = v.lowerCaseList(Setting.ALLOWED_HOSTS);
    for (String h : hosts) {
      if (!HOST_PORT.matcher(h).matches()) {
        throw v.bad(Setting.ALLOWED_HOSTS, "'" + h + "' is not host or host:port");
      }
    }
    return hosts;
  }

  /** {@code allowed_origins}, lower case, without a trailing slash. */
  static List<String> allowedOrigins(SettingValues v) {
    List<String> origins = new ArrayList<>();
    for (String o : v.lowerCaseList(Setting.ALLOWED_ORIGINS)) {
      String origin = o.endsWith("/") ? o.substring(0, o.length() - 1) : o;
      if (!ORIGIN.matcher(origin).matches()) {
        throw v.bad(
            Setting.ALLOWED_ORIGINS,
            "'" + o + "' is not an origin (scheme://host[:port], no path)");
      }
      origins.add(origin);
    }
    return List.copyOf(origins);
  }

  /**
   * Whether {@code host} is {@code localhost} or a loopback IP literal. No name is looked up: any
   * other name counts as not loopback.
   */
  static boolean isLoopback(String host) {
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.equalsIgnoreCase("localhost")) {
      return true;
    }
    if (!h.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}") && !h.matches("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) {
      return false;
    }
    try {
      return InetAddress.getByName(h).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
