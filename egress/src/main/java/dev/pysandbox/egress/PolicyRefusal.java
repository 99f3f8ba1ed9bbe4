package dev.pysandbox.egress;

/**
 * Why a destination may not be reached, inside the proxy: a policy refusal (HTTP 403) or a host
 * that did not resolve (HTTP 502). Carries no stack trace: it is an answer, not a bug.
 */
final class PolicyRefusal extends Exception {
  private final String address;
  private final boolean unresolved;

  PolicyRefusal(String reason, String address, boolean unresolved) {
    super(reason, null, false, false);
    this.address = address;
    this.unresolved = unresolved;
  }

  String reason() {
    return getMessage();
  }

  /** The refused address, or null when the name was refused before resolving. */
  String address() {
    return address;
  }

  /** True when the host did not resolve, rather than being refused. */
  boolean unresolved() {
    return unresolved;
  }

  /** The first refusal in a failure's chain of causes, or null. */
  static PolicyRefusal in(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof PolicyRefusal refusal) {
        return refusal;
      }
    }
    return null;
  }
}
