package dev.pysandbox.egress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.SocketAddressResolver;

/**
 * jetty-client's name resolution, replaced: it answers only with the addresses pinned on the
 * request's {@link Pin} (and checks them again), and refuses a request that carries none. So the
 * proxy's HttpClient can never look a name up by itself.
 */
final class PinnedAddressResolver implements SocketAddressResolver {
  @Override
  public void resolve(
      String host,
      int port,
      Map<String, Object> context,
      Promise<List<InetSocketAddress>> promise) {
    Object destination = context == null ? null : context.get(Destination.CONTEXT_KEY);
    Object tag = destination instanceof Destination d ? d.getOrigin().getTag() : null;
    String wanted = DestinationCheck.unbracketed(host).toLowerCase(Locale.ROOT);
    if (!(tag instanceof Pin pin)
        || pin.port() != port
        || !pin.host().toLowerCase(Locale.ROOT).equals(wanted)) {
      promise.failed(
          new PolicyRefusal(
              "'" + HostPattern.shown(host) + "' has no checked address", null, false));
      return;
    }
    List<InetSocketAddress> out = new ArrayList<>();
    for (InetAddress address : pin.addresses()) {
      String kind = pin.allowPrivate() ? null : AddressRules.classify(address);
      if (kind != null) {
        promise.failed(
            new PolicyRefusal(
                "'" + AddressRules.format(address) + "' is " + kind,
                AddressRules.format(address),
                false));
        return;
      }
      out.add(new InetSocketAddress(address, port));
    }
    promise.succeeded(out);
  }
}
