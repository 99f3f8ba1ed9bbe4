package dev.pysandbox.http.rest;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.StrictUtf8;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Strict percent-decoding of a path segment or a query value, once: {@code %XX} to its byte, the
 * bytes read as UTF-8, anything malformed refused. What it returns reaches the core unchanged, so
 * that the core's own path rules (no {@code ..}, no absolute path, no NUL) judge exactly what the
 * client sent.
 */
final class PercentDecoding {
  private PercentDecoding() {}

  /**
   * @param plusIsSpace true for a query string ({@code application/x-www-form-urlencoded})
   * @throws PysandboxException {@code invalid_argument} for a bad escape or bytes that are not
   *     UTF-8
   */
  static String decode(String raw, boolean plusIsSpace) {
    if (raw.indexOf('%') < 0 && (!plusIsSpace || raw.indexOf('+') < 0)) {
      return raw;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length());
    int plain = 0; // start of the run of characters taken as they are
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c != '%' && (c != '+' || !plusIsSpace)) {
        continue;
      }
      out.writeBytes(raw.substring(plain, i).getBytes(StandardCharsets.UTF_8));
      if (c == '+') {
        out.write(' ');
      } else {
        int hi = i + 2 < raw.length() ? Character.digit(raw.charAt(i + 1), 16) : -1;
        int lo = hi >= 0 ? Character.digit(raw.charAt(i + 2), 16) : -1;
        if (lo < 0) {
          throw PysandboxException.invalid(
              PysandboxException.quote(raw) + " has a bad percent escape at index " + i);
        }
        out.write(hi << 4 | lo);
        i += 2;
      }
      plain = i + 1;
    }
    out.writeBytes(raw.substring(plain).getBytes(StandardCharsets.UTF_8));
    String text = StrictUtf8.decode(out.toByteArray());
    if (text == null) {
      throw PysandboxException.invalid(
          PysandboxException.quote(raw) + " is not percent-encoded UTF-8");
    }
    return text;
  }
}
