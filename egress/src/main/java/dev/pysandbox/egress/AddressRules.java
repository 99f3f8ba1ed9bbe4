package dev.pysandbox.egress;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * Which addresses a sandbox may never reach unless private addresses are allowed: everything that
 * is not a public unicast address. Kept apart from {@link EgressPolicy} so that the classes of
 * address are one table, read top to bottom.
 */
final class AddressRules {
  private static final Pattern DOTTED_QUAD = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  private AddressRules() {}

  /**
   * The class of a refused address, as a phrase that completes "'10.0.0.1' is …" ({@code "a private
   * address"}), or null for a public unicast address.
   */
  static String classify(InetAddress address) {
    byte[] b = address.getAddress();
    return b.length == 4 ? classifyV4(b, 0) : classifyV6(b);
  }

  private static String classifyV4(byte[] b, int at) {
    int a0 = b[at] & 0xff;
    int a1 = b[at + 1] & 0xff;
    int a2 = b[at + 2] & 0xff;
    int a3 = b[at + 3] & 0xff;
    if (a0 == 169 && a1 == 254 && a2 == 169 && a3 == 254) {
      return "a cloud metadata address";
    }
    if (a0 == 0) {
      return (a1 | a2 | a3) == 0
          ? "the unspecified address"
          : "a 'this network' (0.0.0.0/8) address";
    }
    if (a0 == 127) {
      return "a loopback address";
    }
    if (a0 == 10 || (a0 == 172 && (a1 & 0xf0) == 16) || (a0 == 192 && a1 == 168)) {
      return "a private address";
    }
    if (a0 == 100 && (a1 & 0xc0) == 64) {
      return "a shared (CGNAT, 100.64.0.0/10) address";
    }
    if (a0 == 169 && a1 == 254) {
      return "a link-local address";
    }
    if ((a0 & 0xf0) == 224) {
      return "a multicast address";
    }
    if ((a0 & a1 & a2 & a3) == 255) {
      return "the broadcast address";
    }
    if ((a0 & 0xf0) == 240) {
      return "a reserved (240.0.0.0/4) address";
    }
    return null;
  }

  private static String classifyV6(byte[] b) {
    if (isMetadataV6(b)) {
      return "a cloud metadata address";
    }
    if (zeros(b, 0, 16)) {
      return "the unspecified address";
    }
    if (zeros(b, 0, 15) && b[15] == 1) {
      return "a loopback address";
    }
    // IPv6 forms that carry an IPv4 address reach that address: judge the embedded one.
    if (zeros(b, 0, 10) && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff) {
      return embedded(b, 12, "IPv4-mapped");
    }
    if (zeros(b, 0, 12)) {
      return embedded(b, 12, "IPv4-compatible");
    }
    if (b[0] == 0 && b[1] == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b) {
      return zeros(b, 4, 12) ? embedded(b, 12, "NAT64") : null;
    }
    if (b[0] == 0x20 && b[1] == 0x02) {
      return embedded(b, 2, "6to4");
    }
    int b0 = b[0] & 0xff;
    int b1 = b[1] & 0xff;
    if ((b0 & 0xfe) == 0xfc) {
      return "a private (unique local, fc00::/7) address";
    }
    if (b0 == 0xfe && (b1 & 0xc0) == 0x80) {
      return "a link-local address";
    }
    if (b0 == 0xfe && (b1 & 0xc0) == 0xc0) {
      return "a site-local address";
    }
    if (b0 == 0xff) {
      return "a multicast address";
    }
    return null;
  }

  /** AWS's IPv6 instance metadata address, fd00:ec2::254. */
  private static boolean isMetadataV6(byte[] b) {
    return (b[0] & 0xff) == 0xfd
        && b[1] == 0
        && b[2] == 0x0e
        && (b[3] & 0xff) == 0xc2
        && zeros(b, 4, 14)
        && b[14] == 0x02
        && b[15] == 0x54;
  }

  private static String embedded(byte[] b, int at, String form) {
    String v4 = classifyV4(b, at);
    return v4 == null ? null : v4 + " (" + form + ")";
  }

  private static boolean zeros(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The address parsed from an IP literal ({@code 10.0.0.1}, {@code ::1}, {@code [::1]}), or null
   * when {@code host} is not one and so must be a name. Never looks anything up.
   *
   * @throws IllegalArgumentException for something that looks like a literal and is not one
   */
  static InetAddress literal(String host) {
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    boolean v6 = h.indexOf(':') >= 0;
    if (!v6 && !DOTTED_QUAD.matcher(h).matches()) {
      return null;
    }
    if (v6 && !h.matches("[0-9A-Fa-f:.]+")) {
      // A scope id (%eth0) or anything else InetAddress might treat as something to look up.
      throw new IllegalArgumentException("'" + host + "' is not a valid IP address");
    }
    try {
      return InetAddress.getByName(h);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("'" + host + "' is not a valid IP address", e);
    }
  }

  /** The address as people write it: dotted quad, or IPv6 with the longest zero run as "::". */
  static String format(InetAddress address) {
    if (address instanceof Inet4Address) {
      return address.getHostAddress();
    }
    byte[] b = address.getAddress();
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
    }
    if (zeros(b, 0, 10) && groups[5] == 0xffff) {
      return "::ffff:"
          + (b[12] & 0xff)
          + "."
          + (b[13] & 0xff)
          + "."
          + (b[14] & 0xff)
          + "."
          + (b[15] & 0xff);
    }
    int bestStart = -1;
    int bestLength = 1;
    for (int i = 0; i < 8; ) {
      int j = i;
      while (j < 8 && groups[j] == 0) {
        j++;
      }
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j == i ? i + 1 : j;
    }
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        out.append("::");
        i += bestLength - 1;
        continue;
      }
      if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
        out.append(':');
      }
      out.append(Integer.toHexString(groups[i]));
    }
    return out.toString();
  }
}
