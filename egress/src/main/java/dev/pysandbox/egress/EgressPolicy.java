package dev.pysandbox.egress;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Where a sandbox may connect: an allow-list of host patterns and the address rule. Immutable and
 * thread-safe.
 *
 * <p>A pattern is a host name ({@code pypi.org}), or {@code *.} and a name with at least two labels
 * ({@code *.pythonhosted.org}: any subdomain, not the name itself), optionally with one port
 * ({@code example.com:8443}); a pattern without a port allows 80 and 443 only. Names are
 * lower-cased and internationalized names turned to ASCII ({@code bücher.example} is {@code
 * xn--bcher-kva.example}). IP literals ({@code 127.0.0.1:8080}, {@code [::1]:8080}) are accepted
 * only in a policy with {@code allowPrivate}: they exist to reach a local mirror or a test server,
 * and any other destination should be named.
 *
 * <p>Name rules ({@link #checkHost}) come first; the proxy then resolves an allowed name once and
 * refuses it when any answer fails {@link #checkAddress}, so a public name that resolves to a
 * private address does not get in.
 *
 * @param allow the canonical patterns, in the order given, without duplicates
 * @param allowPrivate true to allow loopback, private, link-local, metadata and the other
 *     non-public addresses (for tests and a local package mirror, never for untrusted code on a
 *     shared host)
 */
public record EgressPolicy(List<String> allow, boolean allowPrivate) {

  /**
   * Validates and normalizes the patterns; see {@link #of}.
   *
   * @throws IllegalArgumentException naming the first pattern that is not valid
   */
  public EgressPolicy {
    Objects.requireNonNull(allow, "allow");
    Set<String> canonical = new LinkedHashSet<>();
    for (String pattern : allow) {
      canonical.add(HostPattern.parse(pattern, allowPrivate).toString());
    }
    allow = List.copyOf(canonical);
  }

  /**
   * A policy from patterns as a person or a config file writes them.
   *
   * @param patterns host patterns (see the class comment); an empty list allows nothing
   * @param allowPrivate whether non-public addresses may be reached
   * @throws IllegalArgumentException naming the pattern, for an empty pattern, {@code *}, a
   *     wildcard other than one leading {@code *.}, a wildcard over a single label ({@code *.com}),
   *     an IP literal without {@code allowPrivate}, a URL or path, a bad port, or a name over 253
   *     characters
   */
  public static EgressPolicy of(List<String> patterns, boolean allowPrivate) {
    return new EgressPolicy(patterns, allowPrivate);
  }

  /**
   * The policy for a session that asked for fewer hosts than the server allows. A session may
   * narrow the server's policy, never widen it: each requested pattern must be covered by one of
   * this policy's ({@code *.example.com} covers {@code api.example.com} and {@code
   * *.api.example.com}; {@code example.com} does not cover {@code *.example.com}; a pattern without
   * a port covers {@code :80} and {@code :443}).
   *
   * @param requested the session's patterns; an empty list gives a policy that allows nothing
   * @return a policy of exactly the requested patterns, keeping this policy's {@code allowPrivate}
   * @throws IllegalArgumentException naming the first requested pattern that is invalid or not
   *     covered
   */
  public EgressPolicy narrow(List<String> requested) {
    Objects.requireNonNull(requested, "requested");
    List<HostPattern> mine = patterns();
    for (String raw : requested) {
      HostPattern wanted = HostPattern.parse(raw, allowPrivate);
      if (mine.stream().noneMatch(p -> p.covers(wanted))) {
        throw new IllegalArgumentException(
            "'"
                + wanted
                + "' is not covered by the server's allow-list ("
                + listed()
                + "): a session may narrow it, never widen it");
      }
    }
    return new EgressPolicy(requested, allowPrivate);
  }

  /**
   * The name-level check of a destination: is it on the allow-list, with an allowed port? An IP
   * literal is also given the {@link #checkAddress} test here. Does not resolve names.
   *
   * @param host a host name or IP literal (IPv6 with or without brackets), as a client sent it
   * @param port the destination port
   * @return allowed, or refused with a reason fit to show the sandboxed code
   */
  public Decision checkHost(String host, int port) {
    if (host == null || host.isBlank()) {
      return Decision.refused("no host given");
    }
    String h = host.strip();
    if (port < 1 || port > 65535) {
      return Decision.refused("port " + port + " is out of range");
    }
    InetAddress ip;
    try {
      ip = AddressRules.literal(h);
    } catch (IllegalArgumentException e) {
      return Decision.refused("'" + HostPattern.shown(h) + "' is not a valid host name or address");
    }
    String name = null;
    String shown;
    if (ip != null) {
      Decision address = checkAddress(ip);
      if (!address.allowed()) {
        return address;
      }
      shown = AddressRules.format(ip);
    } else {
      name = HostPattern.asciiName(h);
      if (name == null) {
        return Decision.refused("'" + HostPattern.shown(h) + "' is not a valid host name");
      }
      shown = name;
    }
    boolean hostListed = false;
    for (HostPattern pattern : patterns()) {
      if (pattern.matchesHost(name, ip)) {
        if (pattern.allowsPort(port)) {
          return Decision.ALLOWED;
        }
        hostListed = true;
      }
    }
    if (hostListed) {
      return Decision.refused(
          "port "
              + port
              + " of '"
              + shown
              + "' is not in the allow-list (allowed: "
              + listed()
              + ")");
    }
    return Decision.refused(
        "host '" + shown + "' is not in the allow-list (allowed: " + listed() + ")");
  }

  /**
   * The address-level check: refuses, unless {@code allowPrivate}, loopback (127.0.0.0/8, ::1),
   * private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), cloud
   * metadata (169.254.169.254, fd00:ec2::254), shared CGNAT (100.64/10), 0.0.0.0/8 and ::,
   * multicast, broadcast and 240/4, site-local fec0::/10, and IPv6 forms that embed one of these
   * IPv4 addresses (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16).
   *
   * @param address a resolved address
   * @return allowed, or refused with a reason such as {@code '10.0.0.1' is a private address}
   */
  public Decision checkAddress(InetAddress address) {
    Objects.requireNonNull(address, "address");
    if (allowPrivate) {
      return Decision.ALLOWED;
    }
    String kind = AddressRules.classify(address);
    return kind == null
        ? Decision.ALLOWED
        : Decision.refused("'" + AddressRules.format(address) + "' is " + kind);
  }

  /** The patterns, parsed again: a record keeps only its components, and lists are short. */
  private List<HostPattern> patterns() {
    List<HostPattern> parsed = new ArrayList<>(allow.size());
    for (String pattern : allow) {
      parsed.add(HostPattern.parse(pattern, true));
    }
    return parsed;
  }

  private String listed() {
    return allow.isEmpty() ? "none" : String.join(", ", allow);
  }

  /**
   * The outcome of a check.
   *
   * @param allowed true when the destination may be reached
   * @param reason why it was refused, fit to show the sandboxed code; null when allowed
   */
  public record Decision(boolean allowed, String reason) {
    static final Decision ALLOWED = new Decision(true, null);

    /**
     * @throws IllegalArgumentException for a refusal without a reason, or an allowance with one
     */
    public Decision {
      if (allowed == (reason != null)) {
        throw new IllegalArgumentException("a refusal has a reason, an allowance none");
      }
    }

    static Decision refused(String reason) {
      return new Decision(false, reason);
    }
  }
}
