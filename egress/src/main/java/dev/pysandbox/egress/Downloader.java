package dev.pysandbox.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;

/**
 * The server's own fetch for {@code download_file}: the same checks and pinning as a sandbox's
 * request, redirects followed by hand so that every hop is checked, and the body streamed to the
 * caller's thread through a bounded copy. A record: it is made for one download from the proxy's
 * client, check and clock, and holds nothing else.
 */
record Downloader(HttpClient client, DestinationCheck check, Clock clock) {
  static final int MAX_REDIRECTS = 5;
  private static final Set<Integer> REDIRECTS = Set.of(301, 302, 303, 307, 308);

  EgressProxy.Download download(
      URI url,
      EgressPolicy policy,
      long maxBytes,
      Duration timeout,
      EgressProxy.MinimumRate pace,
      OutputStream out,
      EgressListener listener)
      throws IOException, EgressProxy.EgressRefused {
    long deadline = System.nanoTime() + timeout.toNanos();
    URI current = url;
    for (int redirects = 0; ; redirects++) {
      Hop hop = new Hop(current, policy, listener, pace);
      Response response = hop.send(deadline, timeout);
      int status = response.getStatus();
      String location = response.getHeaders().get(HttpHeader.LOCATION);
      if (REDIRECTS.contains(status) && location != null) {
        hop.end();
        if (redirects == MAX_REDIRECTS) {
          throw new IOException(
              "GET " + url + " was redirected more than " + MAX_REDIRECTS + " times");
        }
        try {
          current = current.resolve(location.strip());
        } catch (IllegalArgumentException e) {
          throw new IOException("GET " + current + " redirected to a bad URL: " + location, e);
        }
        continue;
      }
      if (status < 200 || status > 299) {
        hop.end();
        throw new EgressProxy.DownloadFailed(
            "GET " + current + " answered HTTP " + status, status, false);
      }
      long declared = response.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
      if (declared > maxBytes) {
        hop.end();
        throw new EgressProxy.DownloadFailed(
            "download of "
                + current
                + " is "
                + declared
                + " bytes, over the limit of "
                + maxBytes
                + " bytes",
            0,
            true);
      }
      long bytes = hop.copyBody(out, maxBytes, timeout);
      return new EgressProxy.Download(
          status, response.getHeaders().get(HttpHeader.CONTENT_TYPE), bytes, current);
    }
  }

  /** One request of a download: checked, pinned, reported once. */
  private final class Hop {
    private final URI uri;
    private final Exchange exchange;
    private final InputStreamResponseListener body = new InputStreamResponseListener();
    private final EgressProxy.MinimumRate pace;
    private Request request;

    Hop(URI uri, EgressPolicy policy, EgressListener listener, EgressProxy.MinimumRate pace)
        throws EgressProxy.EgressRefused {
      this.uri = uri;
      this.pace = pace;
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      String host = uri.getHost() == null ? "" : DestinationCheck.unbracketed(uri.getHost());
      int port =
          uri.getPort() > 0
              ? uri.getPort()
              : scheme.equals("https") ? 443 : scheme.equals("http") ? 80 : 0;
      this.exchange = new Exchange("download", "DOWNLOAD", host, port, clock, listener, e -> {});
      if (!scheme.equals("http") && !scheme.equals("https")) {
        refuse(
            "only http and https URLs can be downloaded, not '"
                + HostPattern.shown(uri.toString())
                + "'",
            null);
      }
      if (host.isEmpty()) {
        refuse("'" + HostPattern.shown(uri.toString()) + "' names no host", null);
      }
      DestinationCheck.Checked checked;
      try {
        checked = check.check(policy, host, port);
      } catch (PolicyRefusal refusal) {
        refuse(refusal.reason(), refusal.address());
        return;
      }
      exchange.pin(checked.first());
      this.request =
          client
              .newRequest(uri)
              .method(HttpMethod.GET)
              .followRedirects(false)
              .tag(Pin.of(checked, policy));
      if (pace.bytesPerSecond() > 0) {
        // An origin silent for this long is gone; the minimum rate ends one that trickles.
        request.idleTimeout(pace.grace().toMillis() * 3, TimeUnit.MILLISECONDS);
      }
    }

    private void refuse(String reason, String address) throws EgressProxy.EgressRefused {
      exchange.refusedAddress(address);
      exchange.refuse(reason);
      throw new EgressProxy.EgressRefused(reason);
    }

    Response send(long deadline, Duration timeout) throws IOException, EgressProxy.EgressRefused {
      long left = remainingMillis(deadline, timeout);
      request.timeout(left, TimeUnit.MILLISECONDS).send(body);
      try {
        return body.get(left, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        request.abort(e);
        end();
        throw timedOut(timeout, e);
      } catch (InterruptedException e) {
        request.abort(e);
        end();
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("download of " + uri + " was interrupted");
      } catch (ExecutionException e) {
        PolicyRefusal refusal = PolicyRefusal.in(e.getCause());
        if (refusal != null) {
          refuse(refusal.reason(), refusal.address());
        }
        end();
        if (e.getCause() instanceof TimeoutException) {
          throw timedOut(timeout, e.getCause());
        }
        throw new IOException("GET " + uri + " failed: " + e.getCause(), e.getCause());
      }
    }

    long copyBody(OutputStream out, long maxBytes, Duration timeout) throws IOException {
      long total = 0;
      byte[] buffer = new byte[64 * 1024];
      long began = System.nanoTime();
      try (InputStream in = body.getInputStream()) {
        int n;
        while ((n = in.read(buffer)) >= 0) {
          total += n;
          exchange.addIn(n);
          tooSlow(total, System.nanoTime() - began);
          if (total > maxBytes) {
            request.abort(new IOException("over the limit"));
            throw new EgressProxy.DownloadFailed(
                "download of " + uri + " exceeded the limit of " + maxBytes + " bytes", 0, true);
          }
          out.write(buffer, 0, n);
        }
      } catch (IOException e) {
        if (PolicyRefusal.in(e) == null && isTimeout(e)) {
          throw timedOut(timeout, e);
        }
        if (e instanceof EgressProxy.DownloadFailed || PolicyRefusal.in(e) != null) {
          throw e;
        }
        // Jetty's message for a body cut short is a dump of its connection: say what happened.
        throw new IOException(
            "download of "
                + uri
                + " broke off after "
                + total
                + " bytes ("
                + e.getClass().getSimpleName()
                + ")",
            e);
      } finally {
        exchange.finish();
      }
      return total;
    }

    /** Fails the download when the origin, past the grace, sends slower than the minimum. */
    private void tooSlow(long total, long nanos) throws EgressProxy.DownloadFailed {
      long min = pace.bytesPerSecond();
      if (min > 0 && nanos > pace.grace().toNanos() && total * 1_000_000_000L < min * nanos) {
        request.abort(new IOException("too slow"));
        throw new EgressProxy.DownloadFailed(
            "download of "
                + uri
                + " came at "
                + total * 1_000_000_000L / nanos
                + " bytes per second ("
                + total
                + " bytes in "
                + nanos / 1_000_000_000L
                + " s), under the minimum of "
                + min
                + " (http_min_data_rate); the origin is too slow",
            0,
            false);
      }
    }

    void end() {
      try {
        body.getInputStream().close();
      } catch (IOException ignored) {
        // The body was not wanted.
      }
      exchange.finish();
    }

    private IOException timedOut(Duration timeout, Throwable cause) {
      return new IOException(
          "download of " + uri + " timed out (limit " + timeout.toMillis() + " ms)", cause);
    }
  }

  private static boolean isTimeout(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException) {
        return true;
      }
    }
    return false;
  }

  private static long remainingMillis(long deadline, Duration timeout) throws IOException {
    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    if (left <= 0) {
      throw new IOException("download timed out (limit " + timeout.toMillis() + " ms)");
    }
    return left;
  }
}
