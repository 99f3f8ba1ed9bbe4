package dev.pysandbox.http.rest;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.http.ErrorBodies;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Sends an opened file: its bytes streamed through a 64 KiB buffer (never held whole), an ETag of
 * its sha256 for {@code If-None-Match} (304), one byte range for {@code Range} (206, or 416 when
 * nothing of it is in the file; several ranges get the whole file), and headers that keep a browser
 * from showing what the code wrote as a page of this origin (attachment, nosniff, a sandbox CSP).
 */
final class Downloads {
  private static final int CHUNK = 64 * 1024;

  private Downloads() {}

  /** An inclusive byte range. */
  record Range(long first, long last) {
    long length() {
      return last - first + 1;
    }
  }

  static void send(HttpServletRequest req, HttpServletResponse resp, FileStream f, boolean head)
      throws IOException {
    String etag = "\"" + f.sha256() + "\"";
    long size = f.sizeBytes();
    resp.setHeader("ETag", etag);
    resp.setHeader(
        "Last-Modified",
        DateTimeFormatter.RFC_1123_DATE_TIME.format(f.modifiedAt().atOffset(ZoneOffset.UTC)));
    resp.setHeader("Cache-Control", "private, no-cache");
    resp.setHeader("Accept-Ranges", "bytes");
    if (matches(req.getHeader("If-None-Match"), etag)) {
      resp.setStatus(HttpServletResponse.SC_NOT_MODIFIED);
      return;
    }
    Range range = null;
    String ifRange = req.getHeader("If-Range");
    if (ifRange == null || ifRange.trim().equals(etag)) {
      String header = req.getHeader("Range");
      if (header != null) {
        range = parse(header, size);
        if (range == NOT_SATISFIABLE) {
          resp.setHeader("Content-Range", "bytes */" + size);
          ErrorBodies.send(
              resp,
              HttpServletResponse.SC_REQUESTED_RANGE_NOT_SATISFIABLE,
              ErrorCode.INVALID_ARGUMENT,
              "range " + header.trim() + " is not in " + f.path() + " (" + size + " bytes)");
          return;
        }
      }
    }
    resp.setContentType(f.mediaType());
    resp.setHeader("Content-Disposition", contentDisposition(f.path()));
    resp.setHeader("X-Content-Type-Options", "nosniff");
    resp.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
    long first = 0;
    long length = size;
    if (range != null) {
      resp.setStatus(HttpServletResponse.SC_PARTIAL_CONTENT);
      resp.setHeader("Content-Range", "bytes " + range.first() + "-" + range.last() + "/" + size);
      first = range.first();
      length = range.length();
    }
    resp.setContentLengthLong(length);
    if (!head) {
      copy(f.content(), first, length, resp.getOutputStream());
    }
  }

  private static void copy(InputStream in, long first, long length, OutputStream out)
      throws IOException {
    in.skipNBytes(first);
    byte[] buf = new byte[(int) Math.max(1, Math.min(CHUNK, length))];
    long left = length;
    while (left > 0) {
      int n = in.read(buf, 0, (int) Math.min(buf.length, left));
      if (n < 0) {
        // The file shrank after it was opened: the promised length cannot be sent.
        throw new EOFException("the file ended " + left + " bytes early");
      }
      out.write(buf, 0, n);
      left -= n;
    }
  }

  /** A marker for a range that lies outside the file. */
  static final Range NOT_SATISFIABLE = new Range(-1, -1);

  /**
   * The one range of a {@code Range} header, clamped to the file; {@code null} when the header is
   * not one byte range (then the whole file is sent), {@link #NOT_SATISFIABLE} when none of it is
   * in the file.
   */
  static Range parse(String header, long size) {
    String h = header.trim();
    if (!h.regionMatches(true, 0, "bytes=", 0, 6) || h.indexOf(',') >= 0) {
      return null;
    }
    String spec = h.substring(6).trim();
    int dash = spec.indexOf('-');
    if (dash < 0) {
      return null;
    }
    String a = spec.substring(0, dash).trim();
    String b = spec.substring(dash + 1).trim();
    if (!a.matches("[0-9]{0,18}") || !b.matches("[0-9]{0,18}") || (a.isEmpty() && b.isEmpty())) {
      return null;
    }
    if (a.isEmpty()) {
      long suffix = Long.parseLong(b);
      if (suffix == 0 || size == 0) {
        return NOT_SATISFIABLE;
      }
      return new Range(Math.max(0, size - suffix), size - 1);
    }
    long first = Long.parseLong(a);
    long last = b.isEmpty() ? Long.MAX_VALUE : Long.parseLong(b);
    if (last < first) {
      return null;
    }
    if (first >= size) {
      return NOT_SATISFIABLE;
    }
    return new Range(first, Math.min(last, size - 1));
  }

  /** True when an {@code If-None-Match} list names this ETag (weakly compared) or is {@code *}. */
  static boolean matches(String ifNoneMatch, String etag) {
    if (ifNoneMatch == null) {
      return false;
    }
    for (String tag : ifNoneMatch.split(",")) {
      String t = tag.trim();
      if (t.startsWith("W/")) {
        t = t.substring(2);
      }
      if (t.equals("*") || t.equals(etag)) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code attachment} with the file's own name in RFC 5987 form, and a plain-ASCII name for old
   * clients.
   */
  static String contentDisposition(String path) {
    String name = path.substring(path.lastIndexOf('/') + 1);
    StringBuilder ascii = new StringBuilder();
    StringBuilder encoded = new StringBuilder();
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      boolean attrChar =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || "!#$&+-.^_`|~".indexOf(c) >= 0;
      encoded.append(attrChar ? String.valueOf((char) c) : String.format("%%%02X", c));
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      ascii.append(c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '_');
    }
    return "attachment; filename=\"" + ascii + "\"; filename*=UTF-8''" + encoded;
  }
}
