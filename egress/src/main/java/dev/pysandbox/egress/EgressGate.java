package dev.pysandbox.egress;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The way out of sandboxes as the core knows it: doors (a Unix socket per sandbox, served under a
 * policy) and downloads for {@code download_file}. {@link EgressProxy} is the one implementation
 * (Jetty's proxy and client); the core gets it from where the server is assembled, so that it never
 * builds the concrete proxy itself.
 */
public interface EgressGate extends AutoCloseable {
  /** Starts serving; doors and downloads fail before. Idempotent. */
  void start();

  /**
   * Opens a door for one sandbox.
   *
   * @param label names the door in logs (the sandbox id)
   * @param listener told of every attempt through the door, allowed or refused
   */
  Door open(String label, EgressPolicy policy, EgressListener listener);

  /**
   * Fetches {@code url} into {@code out} under {@code policy}, following redirects (each hop
   * checked), at most {@code maxBytes}, within {@code timeout}, at the pace {@code pace}.
   *
   * @throws EgressRefused when the policy refuses a hop (its scheme, host or address)
   * @throws IOException on a non-2xx answer ({@link DownloadFailed}), too many redirects, a body
   *     over {@code maxBytes}, the timeout, or a network failure; the message says which
   */
  Download download(
      URI url,
      EgressPolicy policy,
      long maxBytes,
      Duration timeout,
      MinimumRate pace,
      OutputStream out,
      EgressListener listener)
      throws IOException, EgressRefused;

  /** Closes every door and stops serving. Idempotent. */
  @Override
  void close();

  /**
   * The pace an origin must keep: after {@code grace}, at least {@code bytesPerSecond} on average,
   * and never silent for longer than three times {@code grace}; else the download fails. A download
   * holds its caller's thread, and an origin that trickles a byte a second would keep it for the
   * whole timeout.
   *
   * @param bytesPerSecond 0 for no minimum (the timeout alone bounds it)
   */
  public record MinimumRate(long bytesPerSecond, Duration grace) {
    public static final MinimumRate NONE = new MinimumRate(0, Duration.ofSeconds(10));

    public MinimumRate {
      Objects.requireNonNull(grace, "grace");
    }
  }

  /** One sandbox's way out. Thread-safe. */
  public interface Door extends AutoCloseable {
    /** The Unix socket file to bind into the sandbox. */
    Path socket();

    /** What this door allows. */
    EgressPolicy policy();

    /** Stops serving the socket, deletes its file, and ends the requests and tunnels open on it. */
    @Override
    void close();
  }

  /**
   * The outcome of a {@link #download}.
   *
   * @param status the final HTTP status (2xx)
   * @param contentType the final response's {@code Content-Type}, or null
   * @param bytes the body size written to the stream
   * @param finalUrl the URL the body came from, after redirects
   */
  public record Download(int status, String contentType, long bytes, URI finalUrl) {}

  /**
   * A download the origin answered but that cannot be had as asked: its final status is not 2xx
   * ({@link #status()}), or its body is larger than allowed ({@link #tooLarge()}). Asking again
   * gets the same answer unless the status is a server error. Other {@link IOException}s of {@link
   * #download} (a broken transfer, a timeout) may go away.
   */
  public static final class DownloadFailed extends IOException {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final boolean tooLarge;

    DownloadFailed(String message, int status, boolean tooLarge) {
      super(message);
      this.status = status;
      this.tooLarge = tooLarge;
    }

    /** The final HTTP status, or 0 when the failure was the body's size. */
    public int status() {
      return status;
    }

    /** Whether the body was (or was declared) larger than the limit. */
    public boolean tooLarge() {
      return tooLarge;
    }
  }

  /** A download refused by the policy; {@link #reason()} says why, fit to show a user. */
  public static final class EgressRefused extends Exception {
    private final String reason;

    EgressRefused(String reason) {
      super(PlainResponses.REFUSED_PREFIX + reason);
      this.reason = reason;
    }

    /** Why, e.g. {@code host 'evil.com' is not in the allow-list (allowed: pypi.org)}. */
    public String reason() {
      return reason;
    }
  }
}
