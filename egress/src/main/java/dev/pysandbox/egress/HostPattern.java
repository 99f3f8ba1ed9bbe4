package dev.pysandbox.egress;

import java.net.IDN;
import java.net.InetAddress;
import java.util.Locale;

/**
 * One parsed allow-list entry: a host name ({@code pypi.org}), a wildcard over its subdomains
 * ({@code *.pythonhosted.org}) or an IP literal, with an optional port. {@link EgressPolicy} keeps
 * the patterns as their canonical strings (a record on the wire) and parses them back here.
 *
 * @param wildcard true for {@code *.base}: any name ending in {@code .base}, never {@code base}
 * @param host the ASCII, lower-case name (the base of a wildcard), or the literal's formatted form
 * @param ip the address of an IP-literal pattern, else null
 * @param port the one port allowed, or 0 for the default pair 80 and 443
 */
record HostPattern(boolean wildcard, String host, InetAddress ip, int port) {
  static final int MAX_NAME_LENGTH = 253;

  /** Parses and validates one pattern, as documented on {@link EgressPolicy#of}. */
  static HostPattern parse(String raw, boolean allowPrivate) {
    if (raw == null || raw.isBlank()) {
      throw new IllegalArgumentException("empty host pattern: give a host name such as 'pypi.org'");
    }
    String s = raw.strip();
    if (s.contains("://") || s.matches(".*[/?#@\\s\\\\].*")) {
      throw new IllegalArgumentException(
          "'"
              + shown(s)
              + "' is not a host pattern: give a host name such as 'pypi.org', not a URL or a path");
    }
    String hostPart = s;
    int port = 0;
    int colon = s.lastIndexOf(':');
    boolean bareV6 = s.indexOf(':') != colon;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0) {
        throw new IllegalArgumentException("'" + shown(s) + "' has an unclosed '['");
      }
      hostPart = s.substring(0, close + 1);
      String rest = s.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          throw new IllegalArgumentException("'" + shown(s) + "' has text after ']'");
        }
        port = parsePort(s, rest.substring(1));
      }
    } else if (colon >= 0 && !bareV6) {
      hostPart = s.substring(0, colon);
      port = parsePort(s, s.substring(colon + 1));
    }
    if (hostPart.equals("*") || hostPart.equals("*.")) {
      throw new IllegalArgumentException(
          "'"
              + shown(s)
              + "' would allow every host: list the hosts, or one domain as '*.example.com'");
    }
    boolean wildcard = hostPart.startsWith("*.");
    String base = wildcard ? hostPart.substring(2) : hostPart;
    if (base.contains("*")) {
      throw new IllegalArgumentException(
          "'"
              + shown(s)
              + "': a wildcard is allowed only as one leading '*.' (as in '*.pythonhosted.org')");
    }
    InetAddress ip = AddressRules.literal(base);
    if (ip != null) {
      if (wildcard) {
        throw new IllegalArgumentException(
            "'" + shown(s) + "': an IP address cannot take a wildcard");
      }
      if (!allowPrivate) {
        throw new IllegalArgumentException(
            "'"
                + shown(s)
                + "' is an IP address: IP-literal patterns are accepted only where private addresses are"
                + " allowed (allowPrivate); name the host instead");
      }
      return new HostPattern(false, AddressRules.format(ip), ip, port);
    }
    if (base.length() > MAX_NAME_LENGTH) {
      throw new IllegalArgumentException(
          "'"
              + shown(s)
              + "' is longer than "
              + MAX_NAME_LENGTH
              + " characters, the limit of a host name");
    }
    String name = asciiName(base);
    if (name == null) {
      throw new IllegalArgumentException("'" + shown(s) + "' is not a valid host name");
    }
    if (wildcard && name.indexOf('.') < 0) {
      throw new IllegalArgumentException(
          "'" + shown(s) + "' is too broad: a wildcard needs at least two labels after '*.'");
    }
    return new HostPattern(wildcard, name, null, port);
  }

  private static int parsePort(String pattern, String digits) {
    if (!digits.matches("\\d{1,5}")
        || Integer.parseInt(digits) < 1
        || Integer.parseInt(digits) > 65535) {
      throw new IllegalArgumentException(
          "'" + shown(pattern) + "' has an invalid port (give 1 to 65535, or none for 80 and 443)");
    }
    return Integer.parseInt(digits);
  }

  /**
   * The host name as ASCII (IDN), lower-case and without a trailing dot, or null when it is not a
   * valid DNS name (a label over 63 characters, a name over 253, characters other than letters,
   * digits and hyphens, or an all-numeric last label, which only IP addresses have).
   */
  static String asciiName(String host) {
    String h = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
    if (h.isEmpty()) {
      return null;
    }
    String ascii;
    try {
      ascii =
          IDN.toASCII(h.toLowerCase(Locale.ROOT), IDN.USE_STD3_ASCII_RULES)
              .toLowerCase(Locale.ROOT);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (ascii.isEmpty() || ascii.length() > MAX_NAME_LENGTH) {
      return null;
    }
    String[] labels = ascii.split("\\.", -1);
    for (String label : labels) {
      if (label.isEmpty() || label.length() > 63) {
        return null;
      }
    }
    return labels[labels.length - 1].matches("\\d+") ? null : ascii;
  }

  /** True when this pattern names {@code name} (ASCII) or the address {@code address}. */
  boolean matchesHost(String name, InetAddress address) {
    if (ip != null || address != null) {
      return ip != null && ip.equals(address);
    }
    return wildcard ? name.endsWith("." + host) : name.equals(host);
  }

  /** True when this pattern allows the port. */
  boolean allowsPort(int p) {
    return port == 0 ? p == 80 || p == 443 : p == port;
  }

  /** True when everything {@code other} allows, this pattern allows too. */
  boolean covers(HostPattern other) {
    boolean ports = other.port == 0 ? port == 0 : allowsPort(other.port);
    if (!ports) {
      return false;
    }
    if (ip != null || other.ip != null) {
      return ip != null && ip.equals(other.ip);
    }
    if (!wildcard) {
      return !other.wildcard && host.equals(other.host);
    }
    return other.host.endsWith("." + host) || (other.wildcard && other.host.equals(host));
  }

  @Override
  public String toString() {
    String h = ip != null && host.indexOf(':') >= 0 ? "[" + host + "]" : host;
    return (wildcard ? "*." : "") + h + (port == 0 ? "" : ":" + port);
  }

  /** Untrusted text made safe to quote in a message: printable and short. */
  static String shown(String text) {
    String clean = text.replaceAll("[^\\x20-\\x7e]", "?");
    return clean.length() > 100 ? clean.substring(0, 100) + "…" : clean;
  }
}
