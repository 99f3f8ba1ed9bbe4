package dev.pysandbox.egress;

import java.io.IOException;
import org.eclipse.jetty.client.ContentSourceRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;

/**
 * A forwarded request's body as jetty-client reads it from the sandbox: counted, and failed once it
 * passes the limit (a body without a declared length is only known to be too large while it
 * streams).
 */
final class CountedBody extends ContentSourceRequestContent {
  private final Exchange exchange;
  private final long limit;
  private long total;

  CountedBody(Request clientToProxyRequest, Exchange exchange, long limit) {
    super(clientToProxyRequest, clientToProxyRequest.getHeaders().get(HttpHeader.CONTENT_TYPE));
    this.exchange = exchange;
    this.limit = limit;
  }

  @Override
  public Content.Chunk read() {
    Content.Chunk chunk = super.read();
    if (chunk == null || Content.Chunk.isFailure(chunk)) {
      return chunk;
    }
    int n = chunk.remaining();
    total += n;
    exchange.addOut(n);
    if (total > limit) {
      chunk.release();
      return Content.Chunk.from(
          new TooLarge("a request body of more than " + limit + " bytes is over the limit"));
    }
    return chunk;
  }

  /** The body passed the limit. */
  static final class TooLarge extends IOException {
    TooLarge(String message) {
      super(message);
    }

    static TooLarge in(Throwable failure) {
      for (Throwable t = failure; t != null; t = t.getCause()) {
        if (t instanceof TooLarge tooLarge) {
          return tooLarge;
        }
      }
      return null;
    }
  }
}
