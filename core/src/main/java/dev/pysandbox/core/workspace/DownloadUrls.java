package dev.pysandbox.core.workspace;

import dev.pysandbox.api.PysandboxException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/** The URLs {@code download_file} takes: absolute http or https, a host, no credentials. */
final class DownloadUrls {
  static final int MAX_CHARS = 4096;

  private DownloadUrls() {}

  /**
   * @throws PysandboxException {@code invalid_argument} saying what is wrong
   */
  static URI parse(String url) {
    if (url == null || url.isBlank()) {
      throw PysandboxException.invalid("url is required");
    }
    if (url.length() > MAX_CHARS) {
      throw PysandboxException.invalid("url is longer than " + MAX_CHARS + " characters");
    }
    URI u;
    try {
      u = new URI(url.strip());
    } catch (URISyntaxException e) {
      throw PysandboxException.invalid(
          "url " + PysandboxException.quote(url) + " is not a URL: " + e.getReason());
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw PysandboxException.invalid(
          "url " + PysandboxException.quote(url) + " is not http or https");
    }
    if (u.getHost() == null || u.getHost().isEmpty()) {
      throw PysandboxException.invalid("url " + PysandboxException.quote(url) + " has no host");
    }
    if (u.getRawUserInfo() != null) {
      throw PysandboxException.invalid(
          "url " + PysandboxException.quote(url) + " has credentials in it; they are refused");
    }
    return u;
  }
}
