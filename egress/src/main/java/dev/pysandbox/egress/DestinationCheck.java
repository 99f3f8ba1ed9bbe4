package dev.pysandbox.egress;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * The whole check of one destination, done once per request or tunnel: the name against the
 * allow-list, one resolution, and every answer against the address rule. The proxy then connects
 * only to the addresses returned here, never resolving the name again, so a name cannot be made to
 * answer differently between the check and the connection (DNS rebinding).
 */
final class DestinationCheck {
  /** Name resolution, a seam so tests can make a name answer with chosen addresses. */
  @FunctionalInterface
  interface HostResolver {
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  /**
   * A destination that passed.
   *
   * @param host the host without IPv6 brackets
   * @param port the port
   * @param addresses every address the host resolved to, all checked
   */
  record Checked(String host, int port, List<InetAddress> addresses) {
    InetAddress first() {
      return addresses.get(0);
    }
  }

  private final HostResolver resolver;

  DestinationCheck(HostResolver resolver) {
    this.resolver = resolver;
  }

  Checked check(EgressPolicy policy, String host, int port) throws PolicyRefusal {
    EgressPolicy.Decision named = policy.checkHost(host, port);
    if (!named.allowed()) {
      String literal = literalOrNull(host);
      throw new PolicyRefusal(named.reason(), literal, false);
    }
    String h = unbracketed(host.strip());
    boolean literal = AddressRules.literal(h) != null;
    InetAddress[] answers;
    try {
      answers = resolver.resolve(literal ? h : HostPattern.asciiName(h));
    } catch (UnknownHostException e) {
      throw new PolicyRefusal("'" + HostPattern.shown(h) + "' does not resolve", null, true);
    }
    if (answers == null || answers.length == 0) {
      throw new PolicyRefusal("'" + HostPattern.shown(h) + "' does not resolve", null, true);
    }
    for (InetAddress answer : answers) {
      EgressPolicy.Decision d = policy.checkAddress(answer);
      if (!d.allowed()) {
        String shown = AddressRules.format(answer);
        String reason =
            literal
                ? d.reason()
                : "'" + h + "' resolves to " + shown + ", " + AddressRules.classify(answer);
        throw new PolicyRefusal(reason, shown, false);
      }
    }
    return new Checked(h, port, List.of(answers));
  }

  static String unbracketed(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  private static String literalOrNull(String host) {
    try {
      InetAddress ip = host == null ? null : AddressRules.literal(host.strip());
      return ip == null ? null : AddressRules.format(ip);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
