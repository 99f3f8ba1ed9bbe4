package dev.pysandbox.egress;

import java.net.InetAddress;
import java.util.List;

/**
 * The checked addresses of one destination, carried as the jetty-client request's tag. The tag is
 * part of jetty-client's connection-pool key, so a pooled connection is only ever reused for a
 * request that pinned the same addresses, and {@link PinnedAddressResolver} reads the addresses
 * back instead of resolving the name again.
 */
record Pin(String host, int port, List<InetAddress> addresses, boolean allowPrivate) {
  static Pin of(DestinationCheck.Checked checked, EgressPolicy policy) {
    return new Pin(checked.host(), checked.port(), checked.addresses(), policy.allowPrivate());
  }
}
