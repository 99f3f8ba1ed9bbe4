package dev.pysandbox.egress;

import java.io.IOException;
import java.util.Locale;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * Absolute-form requests ({@code GET http://host/path}), on Jetty's {@link ProxyHandler.Forward}
 * and jetty-client. Checks the destination and pins its addresses on the outgoing request (see
 * {@link Pin}), bounds the request body, adds no {@code Via} or {@code Forwarded} header, and
 * counts the bodies each way. Jetty drops the hop-by-hop headers and {@code Proxy-Authorization}.
 */
final class ForwardHandler extends ProxyHandler.Forward {
  private static final String PIN = Pin.class.getName();

  private final DestinationCheck check;
  private final long maxRequestBody;
  private final long idleTimeoutMillis;

  ForwardHandler(DestinationCheck check, long maxRequestBody, long idleTimeoutMillis) {
    this.check = check;
    this.maxRequestBody = maxRequestBody;
    this.idleTimeoutMillis = idleTimeoutMillis;
    setUseServerThreadPool(true);
  }

  @Override
  protected HttpClient newHttpClient() {
    ClientConnector connector = new ClientConnector();
    connector.setSslContextFactory(new SslContextFactory.Client());
    return new HttpClient(new HttpClientTransportOverHTTP(connector));
  }

  @Override
  protected void configureHttpClient(HttpClient httpClient) {
    super.configureHttpClient(httpClient);
    httpClient.setSocketAddressResolver(new PinnedAddressResolver());
    // No "Jetty/12" User-Agent on requests whose client sent none: nothing about the server leaks.
    httpClient.setUserAgentField(null);
    httpClient.setIdleTimeout(idleTimeoutMillis);
    httpClient.setConnectTimeout(15_000);
    // Each pin is its own destination: let idle ones go rather than keep one per DNS answer.
    httpClient.setDestinationIdleTimeout(idleTimeoutMillis);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    ProxyDoor door = ProxyDoor.of(request);
    HttpURI uri = request.getHttpURI();
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      PlainResponses.write(
          request,
          response,
          callback,
          400,
          "pysandbox's egress proxy forwards only http:// and https:// URLs, not '"
              + HostPattern.shown(scheme)
              + ":'");
      return true;
    }
    String host = uri.getHost();
    if (host == null || host.isEmpty()) {
      PlainResponses.write(
          request, response, callback, 400, "pysandbox's egress proxy needs an absolute URL");
      return true;
    }
    host = DestinationCheck.unbracketed(host);
    int port = uri.getPort() > 0 ? uri.getPort() : scheme.equals("https") ? 443 : 80;
    Exchange exchange = door.begin(request.getMethod(), host, port);
    if (exchange == null) {
      door.tooMany(request, response, callback, request.getMethod(), host, port);
      return true;
    }
    long declared = request.getLength();
    if (declared > maxRequestBody) {
      String reason =
          "a request body of "
              + declared
              + " bytes is over the limit of "
              + maxRequestBody
              + " bytes";
      exchange.refuse(reason);
      PlainResponses.write(request, response, callback, 413, reason);
      return true;
    }
    DestinationCheck.Checked checked;
    try {
      checked = check.check(door.policy(), host, port);
    } catch (PolicyRefusal refusal) {
      answer(request, response, callback, exchange, refusal);
      return true;
    }
    exchange.pin(checked.first());
    request.setAttribute(Exchange.ATTRIBUTE, exchange);
    request.setAttribute(PIN, Pin.of(checked, door.policy()));
    return super.handle(request, response, callback);
  }

  /** Answers a refusal (403) or an unresolvable host (502) and ends the exchange with it. */
  static void answer(
      Request request,
      Response response,
      Callback callback,
      Exchange exchange,
      PolicyRefusal refusal) {
    exchange.refusedAddress(refusal.address());
    exchange.refuse(refusal.reason());
    if (refusal.unresolved()) {
      PlainResponses.write(
          request,
          response,
          callback,
          502,
          "pysandbox's egress proxy could not reach the host: " + refusal.reason());
    } else {
      PlainResponses.refused(request, response, callback, refusal.reason());
    }
  }

  @Override
  protected org.eclipse.jetty.client.Request newProxyToServerRequest(
      Request clientToProxyRequest, HttpURI newHttpURI) {
    return super.newProxyToServerRequest(clientToProxyRequest, newHttpURI)
        .tag(clientToProxyRequest.getAttribute(PIN))
        .idleTimeout(idleTimeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** No {@code Via} and no {@code Forwarded}: the destination learns nothing about the server. */
  @Override
  protected void addProxyHeaders(
      Request clientToProxyRequest, org.eclipse.jetty.client.Request proxyToServerRequest) {}

  @Override
  protected org.eclipse.jetty.client.Request.Content newProxyToServerRequestContent(
      Request clientToProxyRequest,
      Response proxyToClientResponse,
      org.eclipse.jetty.client.Request proxyToServerRequest) {
    return new CountedBody(clientToProxyRequest, Exchange.of(clientToProxyRequest), maxRequestBody);
  }

  @Override
  protected void sendProxyToServerRequest(
      Request clientToProxyRequest,
      org.eclipse.jetty.client.Request proxyToServerRequest,
      Response proxyToClientResponse,
      Callback proxyToClientCallback) {
    Exchange.of(clientToProxyRequest)
        .onAbort(() -> proxyToServerRequest.abort(new IOException("the egress door was closed")));
    super.sendProxyToServerRequest(
        clientToProxyRequest, proxyToServerRequest, proxyToClientResponse, proxyToClientCallback);
  }

  @Override
  protected org.eclipse.jetty.client.Response.CompleteListener newServerToProxyResponseListener(
      Request clientToProxyRequest,
      org.eclipse.jetty.client.Request proxyToServerRequest,
      Response proxyToClientResponse,
      Callback proxyToClientCallback) {
    Exchange exchange = Exchange.of(clientToProxyRequest);
    return new ProxyResponseListener(
        clientToProxyRequest, proxyToServerRequest, proxyToClientResponse, proxyToClientCallback) {
      @Override
      public void onContent(
          org.eclipse.jetty.client.Response serverToProxyResponse,
          Content.Chunk chunk,
          Runnable demander) {
        exchange.addIn(chunk.remaining());
        super.onContent(serverToProxyResponse, chunk, demander);
      }

      @Override
      public void onComplete(Result result) {
        super.onComplete(result);
        PolicyRefusal refusal = PolicyRefusal.in(result.getFailure());
        if (refusal != null) {
          exchange.refusedAddress(refusal.address());
          exchange.refuse(refusal.reason());
        } else if (CountedBody.TooLarge.in(result.getFailure()) != null) {
          exchange.refuse(CountedBody.TooLarge.in(result.getFailure()).getMessage());
        } else {
          exchange.finish();
        }
      }
    };
  }

  @Override
  protected void onServerToProxyResponseFailure(
      Request clientToProxyRequest,
      org.eclipse.jetty.client.Request proxyToServerRequest,
      org.eclipse.jetty.client.Response serverToProxyResponse,
      Response proxyToClientResponse,
      Callback proxyToClientCallback,
      Throwable failure) {
    PolicyRefusal refusal = PolicyRefusal.in(failure);
    CountedBody.TooLarge tooLarge = CountedBody.TooLarge.in(failure);
    if (refusal != null && !proxyToClientResponse.isCommitted()) {
      PlainResponses.refused(
          clientToProxyRequest, proxyToClientResponse, proxyToClientCallback, refusal.reason());
    } else if (tooLarge != null && !proxyToClientResponse.isCommitted()) {
      PlainResponses.write(
          clientToProxyRequest,
          proxyToClientResponse,
          proxyToClientCallback,
          413,
          tooLarge.getMessage());
    } else {
      super.onServerToProxyResponseFailure(
          clientToProxyRequest,
          proxyToServerRequest,
          serverToProxyResponse,
          proxyToClientResponse,
          proxyToClientCallback,
          failure);
    }
  }
}
