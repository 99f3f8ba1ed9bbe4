package dev.pysandbox.egress;

import java.net.InetAddress;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request or tunnel in flight: counts its bytes and reports it to the listener exactly once
 * when it ends, whichever of the proxy's paths (refusal, failure, completion, a closed door) gets
 * there first.
 */
final class Exchange {
  static final String ATTRIBUTE = Exchange.class.getName();
  private static final Logger LOG = LoggerFactory.getLogger(Exchange.class);

  private final String label;
  private final String method;
  private final String host;
  private final int port;
  private final Instant at;
  private final EgressListener listener;
  private final Consumer<Exchange> onEnd;
  private final AtomicLong bytesOut = new AtomicLong();
  private final AtomicLong bytesIn = new AtomicLong();
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile InetAddress pinned;
  private volatile String address;
  private volatile Runnable abort = () -> {};
  private volatile boolean aborted;

  Exchange(
      String label,
      String method,
      String host,
      int port,
      Clock clock,
      EgressListener listener,
      Consumer<Exchange> onEnd) {
    this.label = label;
    this.method = method;
    this.host = host == null ? "" : host;
    this.port = port;
    this.at = clock.instant();
    this.listener = listener;
    this.onEnd = onEnd;
  }

  /** The exchange a request carries, or null. */
  static Exchange of(org.eclipse.jetty.server.Request request) {
    return (Exchange) request.getAttribute(ATTRIBUTE);
  }

  String host() {
    return host;
  }

  int port() {
    return port;
  }

  /** The checked address to connect to. */
  InetAddress pinned() {
    return pinned;
  }

  void pin(InetAddress checked) {
    this.pinned = checked;
    this.address = AddressRules.format(checked);
  }

  void refusedAddress(String refused) {
    this.address = refused;
  }

  void addOut(long n) {
    bytesOut.addAndGet(n);
  }

  void addIn(long n) {
    bytesIn.addAndGet(n);
  }

  /**
   * What ends this exchange from outside (its door closing): close the tunnel, abort the request.
   */
  void onAbort(Runnable action) {
    this.abort = action;
    if (aborted) {
      action.run();
    }
  }

  void abort() {
    aborted = true;
    abort.run();
  }

  /** Ends an exchange the policy allowed. */
  void finish() {
    end(true, null);
  }

  /** Ends an exchange that was refused, over a limit, or unresolvable. */
  void refuse(String reason) {
    end(false, reason);
  }

  private void end(boolean allowed, String reason) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    onEnd.accept(this);
    EgressAttempt attempt =
        new EgressAttempt(
            at, method, host, port, address, allowed, reason, bytesOut.get(), bytesIn.get());
    if (!allowed) {
      LOG.info("egress {}: refused {} {}:{}: {}", label, method, host, port, reason);
    }
    try {
      listener.attempt(attempt);
    } catch (RuntimeException e) {
      LOG.warn("egress {}: the attempt listener failed", label, e);
    }
  }
}
