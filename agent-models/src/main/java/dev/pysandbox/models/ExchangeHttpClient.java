package dev.pysandbox.models;

import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventParser;
import dev.pysandbox.api.agent.ModelException.Kind;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient.Version;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * LangChain4j's HTTP client SPI over {@link java.net.http.HttpClient}, for what its own JDK client
 * does not do: a failed exchange keeps its status and Retry-After ({@link ExchangeFailure}), the
 * whole exchange (not only the wait for the headers) is bounded by the call's timeout ({@link
 * ModelCall}), and an interrupt of the calling thread aborts the exchange at once (the connection
 * is closed) instead of leaving it running for its timeout. Synchronous calls only: the providers
 * are asked without streaming.
 */
final class ExchangeHttpClient implements HttpClient {
  private final java.net.http.HttpClient delegate;
  private final Duration readTimeout;
  private final Clock clock;

  private ExchangeHttpClient(Builder builder) {
    java.net.http.HttpClient.Builder b = java.net.http.HttpClient.newBuilder();
    if (builder.connectTimeout != null) {
      b.connectTimeout(builder.connectTimeout);
    }
    if (builder.http11) {
      // Over plain http (a local Ollama, vLLM, the tests' server) the JDK client would try an
      // h2c upgrade on every request, which some servers answer badly.
      b.version(Version.HTTP_1_1);
    }
    this.delegate = b.build();
    this.readTimeout = builder.readTimeout;
    this.clock = builder.clock;
  }

  /** A builder for LangChain4j's {@code httpClientBuilder(...)}. */
  static Builder builder(URI baseUrl, Clock clock) {
    return new Builder("http".equalsIgnoreCase(baseUrl.getScheme()), clock);
  }

  @Override
  public SuccessfulHttpResponse execute(HttpRequest request) {
    ModelCall call = ModelCall.current();
    Duration timeout = call != null && call.timeout() != null ? call.timeout() : readTimeout;
    CompletableFuture<HttpResponse<String>> exchange =
        delegate.sendAsync(toJdkRequest(request, timeout), BodyHandlers.ofString());
    HttpResponse<String> response = await(exchange, timeout, where(request));
    int status = response.statusCode();
    if (status < 200 || status >= 300) {
      throw new ExchangeFailure(
          status,
          "HTTP " + status + " from " + where(request),
          response.body(),
          RetryAfter.parse(response.headers().firstValue("Retry-After").orElse(null), clock));
    }
    if (call != null) {
      call.answered();
    }
    return SuccessfulHttpResponse.builder()
        .statusCode(status)
        .headers(response.headers().map())
        .body(response.body())
        .build();
  }

  private static HttpResponse<String> await(
      CompletableFuture<HttpResponse<String>> exchange, Duration timeout, String where) {
    try {
      return timeout == null
          ? exchange.get()
          : exchange.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      exchange.cancel(true); // since JDK 16 this aborts the exchange and closes its connection
      Thread.currentThread().interrupt();
      throw new ExchangeFailure(Kind.UNAVAILABLE, "the call to " + where + " was interrupted");
    } catch (TimeoutException e) {
      exchange.cancel(true);
      throw new ExchangeFailure(
          Kind.TIMEOUT, "no answer from " + where + " within " + timeout.toMillis() + " ms");
    } catch (ExecutionException e) {
      throw transportFailure(e.getCause(), where, timeout);
    }
  }

  private static ExchangeFailure transportFailure(Throwable cause, String where, Duration timeout) {
    if (cause instanceof HttpTimeoutException) {
      return new ExchangeFailure(
          Kind.TIMEOUT,
          "no answer from "
              + where
              + (timeout == null ? "" : " within " + timeout.toMillis() + " ms"));
    }
    if (cause instanceof ConnectException || cause instanceof UnresolvedAddressException) {
      return new ExchangeFailure(
          Kind.UNAVAILABLE, "cannot connect to " + where + ": " + describe(cause));
    }
    if (cause instanceof IOException) {
      return new ExchangeFailure(
          Kind.SERVER, "the connection to " + where + " failed: " + describe(cause));
    }
    return new ExchangeFailure(Kind.SERVER, "the call to " + where + " failed: " + describe(cause));
  }

  private static String describe(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage();
    return root.getClass().getSimpleName() + (m == null ? "" : " (" + m + ")");
  }

  private static java.net.http.HttpRequest toJdkRequest(HttpRequest request, Duration timeout) {
    if (!request.formDataFields().isEmpty() || !request.formDataFiles().isEmpty()) {
      throw new UnsupportedOperationException("multipart requests are not used by chat models");
    }
    java.net.http.HttpRequest.Builder b =
        java.net.http.HttpRequest.newBuilder().uri(URI.create(request.url()));
    request
        .headers()
        .forEach(
            (name, values) -> {
              if (values != null) {
                values.forEach(value -> b.header(name, value));
              }
            });
    b.method(
        request.method().name(),
        request.body() == null
            ? java.net.http.HttpRequest.BodyPublishers.noBody()
            : java.net.http.HttpRequest.BodyPublishers.ofString(request.body()));
    if (timeout != null) {
      b.timeout(timeout);
    }
    return b.build();
  }

  /** The request's address without its query (which some gateways use for keys). */
  private static String where(HttpRequest request) {
    URI u = URI.create(request.url());
    return u.getScheme()
        + "://"
        + u.getHost()
        + (u.getPort() < 0 ? "" : ":" + u.getPort())
        + (u.getRawPath() == null ? "" : u.getRawPath());
  }

  @Override
  public void execute(
      HttpRequest request, ServerSentEventParser parser, ServerSentEventListener listener) {
    throw new UnsupportedOperationException("pysandbox asks models without streaming");
  }

  /** LangChain4j sets the timeouts of its builder; the call's own timeout takes precedence. */
  static final class Builder implements HttpClientBuilder {
    private final boolean http11;
    private final Clock clock;
    private Duration connectTimeout;
    private Duration readTimeout;

    private Builder(boolean http11, Clock clock) {
      this.http11 = http11;
      this.clock = clock;
    }

    @Override
    public Duration connectTimeout() {
      return connectTimeout;
    }

    @Override
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = timeout;
      return this;
    }

    @Override
    public Duration readTimeout() {
      return readTimeout;
    }

    @Override
    public Builder readTimeout(Duration timeout) {
      this.readTimeout = timeout;
      return this;
    }

    @Override
    public ExchangeHttpClient build() {
      return new ExchangeHttpClient(this);
    }
  }
}
