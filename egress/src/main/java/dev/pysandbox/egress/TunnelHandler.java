package dev.pysandbox.egress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ConcurrentMap;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ConnectHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.HostPort;
import org.eclipse.jetty.util.Promise;

/**
 * CONNECT tunnels (HTTPS through the proxy), on Jetty's {@link ConnectHandler}. Checks the
 * destination before any tunnel exists, connects to the checked address (never resolving the name a
 * second time), counts the bytes each way and reports the tunnel when its upstream side closes.
 */
final class TunnelHandler extends ConnectHandler {
  private final DestinationCheck check;

  TunnelHandler(DestinationCheck check, Handler next, long idleTimeoutMillis) {
    super(next);
    this.check = check;
    setIdleTimeout(idleTimeoutMillis);
  }

  @Override
  protected void handleConnect(
      Request request, Response response, Callback callback, String serverAddress) {
    ProxyDoor door = ProxyDoor.of(request);
    HostPort target;
    try {
      target = new HostPort(serverAddress);
    } catch (IllegalArgumentException e) {
      PlainResponses.write(request, response, callback, 400, "CONNECT needs host:port");
      return;
    }
    String host = DestinationCheck.unbracketed(target.getHost());
    int port = target.getPort(443);
    Exchange exchange = door.begin("CONNECT", host, port);
    if (exchange == null) {
      door.tooMany(request, response, callback, "CONNECT", host, port);
      return;
    }
    DestinationCheck.Checked checked;
    try {
      checked = check.check(door.policy(), host, port);
    } catch (PolicyRefusal refusal) {
      ForwardHandler.answer(request, response, callback, exchange, refusal);
      return;
    }
    exchange.pin(checked.first());
    request.setAttribute(Exchange.ATTRIBUTE, exchange);
    super.handleConnect(request, response, callback, serverAddress);
  }

  /** Connects to the address checked in {@link #handleConnect}, not to the name. */
  @Override
  protected void connectToServer(
      Request request, String host, int port, Promise<SocketChannel> promise) {
    Exchange exchange = Exchange.of(request);
    SocketChannel channel = null;
    try {
      channel = SocketChannel.open();
      channel.socket().setTcpNoDelay(true);
      channel.configureBlocking(false);
      channel.connect(new InetSocketAddress(exchange.pinned(), port));
      promise.succeeded(channel);
    } catch (IOException | RuntimeException e) {
      closeQuietly(channel);
      promise.failed(e);
    }
  }

  @Override
  protected void onConnectFailure(
      Request request, Response response, Callback callback, Throwable failure) {
    Exchange exchange = Exchange.of(request);
    String target = exchange == null ? "the destination" : exchange.host() + ":" + exchange.port();
    if (exchange != null) {
      exchange.finish();
    }
    PlainResponses.write(
        request,
        response,
        callback,
        502,
        "pysandbox's egress proxy could not connect to " + target + ": " + failure.getMessage());
  }

  @Override
  protected void prepareContext(Request request, ConcurrentMap<String, Object> context) {
    context.put(Exchange.ATTRIBUTE, Exchange.of(request));
  }

  @Override
  protected UpstreamConnection newUpstreamConnection(
      EndPoint endPoint, ConnectContext connectContext) {
    Exchange exchange = Exchange.of(connectContext.getRequest());
    UpstreamConnection connection = new CountingUpstream(endPoint, connectContext, exchange);
    exchange.onAbort(endPoint::close);
    return connection;
  }

  @Override
  protected DownstreamConnection newDownstreamConnection(
      EndPoint endPoint, ConcurrentMap<String, Object> context) {
    return new CountingDownstream(endPoint, context, (Exchange) context.get(Exchange.ATTRIBUTE));
  }

  private static void closeQuietly(SocketChannel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // Nothing was sent on it.
      }
    }
  }

  /** The destination's side: what it reads is what the sandbox receives. */
  private final class CountingUpstream extends UpstreamConnection {
    private final Exchange exchange;

    CountingUpstream(EndPoint endPoint, ConnectContext connectContext, Exchange exchange) {
      super(
          endPoint,
          TunnelHandler.this.getExecutor(),
          TunnelHandler.this.getByteBufferPool(),
          connectContext);
      this.exchange = exchange;
    }

    @Override
    protected int read(EndPoint endPoint, ByteBuffer buffer) throws IOException {
      int n = super.read(endPoint, buffer);
      if (n > 0) {
        exchange.addIn(n);
      }
      return n;
    }

    /** The tunnel is over when the destination's side closes (after both halves, or a failure). */
    @Override
    public void onClose(Throwable cause) {
      super.onClose(cause);
      if (getConnection() != null) {
        getConnection().close();
      }
      exchange.finish();
    }
  }

  /** The sandbox's side: what it reads is what the sandbox sends. */
  private final class CountingDownstream extends DownstreamConnection {
    private final Exchange exchange;

    CountingDownstream(
        EndPoint endPoint, ConcurrentMap<String, Object> context, Exchange exchange) {
      super(
          endPoint,
          TunnelHandler.this.getExecutor(),
          TunnelHandler.this.getByteBufferPool(),
          context);
      this.exchange = exchange;
    }

    /** Bytes the client sent right behind its CONNECT, before the tunnel was up. */
    @Override
    public void onUpgradeTo(ByteBuffer buffer) {
      if (buffer != null) {
        exchange.addOut(buffer.remaining());
      }
      super.onUpgradeTo(buffer);
    }

    @Override
    protected int read(EndPoint endPoint, ByteBuffer buffer) throws IOException {
      int n = super.read(endPoint, buffer);
      if (n > 0) {
        exchange.addOut(n);
      }
      return n;
    }
  }
}
