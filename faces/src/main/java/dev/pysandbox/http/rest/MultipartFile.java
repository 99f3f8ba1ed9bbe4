package dev.pysandbox.http.rest;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.BulkInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.MultiPart;
import org.eclipse.jetty.io.Content;

/**
 * The one file part of a {@code multipart/form-data} body, as a stream, parsed as it is read
 * (Jetty's push parser fed 64 KiB at a time, the content of each feed passed on before the next),
 * so that neither memory nor a temporary file holds the upload. The form must have exactly one
 * part, named {@code file}, with a filename; the stream ends only after the form's closing
 * boundary, and fails if anything else comes, so that a file written from it is kept only when the
 * whole form was right. Not thread-safe.
 */
final class MultipartFile extends BulkInputStream {
  static final String PART = "file";
  private static final int CHUNK = 64 * 1024;

  private final InputStream body;
  private final long maxBodyBytes;
  private final MultiPart.Parser parser;
  private final Listener listener = new Listener();
  private final byte[] input = new byte[CHUNK];
  private ByteBuffer pending = ByteBuffer.allocate(2 * CHUNK).flip();
  private String filename;
  private boolean bodyEnded;
  private long bodyBytes;

  private MultipartFile(InputStream body, String boundary, long maxBodyBytes) {
    this.body = body;
    this.maxBodyBytes = maxBodyBytes;
    this.parser = new MultiPart.Parser(boundary, listener);
    this.parser.setMaxParts(2);
  }

  /**
   * Reads the form up to the file part's content.
   *
   * @param contentType the request's, with its boundary
   * @param maxBodyBytes the most of the body read, file and form together: past it (an endless
   *     preamble or epilogue, which the parser would skip for ever) the stream fails with {@code
   *     payload_too_large}
   * @throws PysandboxException {@code unsupported_media_type} when it is not a multipart form,
   *     {@code invalid_argument} when the form is malformed or its first part is not a file named
   *     {@code file}
   */
  static MultipartFile open(InputStream body, String contentType, long maxBodyBytes)
      throws IOException {
    String boundary = contentType == null ? null : MultiPart.extractBoundary(contentType);
    if (contentType == null
        || !contentType.trim().toLowerCase(java.util.Locale.ROOT).startsWith("multipart/form-data")
        || boundary == null
        || boundary.isEmpty()) {
      throw new PysandboxException(
          ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          "send the file as Content-Type: multipart/form-data with a boundary, not "
              + PysandboxException.quote(contentType)
              + " (or PUT the bytes to /sessions/{session_id}/files/{name})");
    }
    MultipartFile f = new MultipartFile(body, boundary, maxBodyBytes);
    while (f.filename == null) {
      if (!f.feed()) {
        throw PysandboxException.invalid("the form has no part named '" + PART + "'");
      }
    }
    return f;
  }

  /** The name the client gave the file (not yet checked). */
  String filename() {
    return filename;
  }

  @Override
  protected int readSome(byte[] b, int off, int len) throws IOException {
    while (!pending.hasRemaining()) {
      if (listener.complete) {
        return -1;
      }
      if (!feed()) {
        throw PysandboxException.invalid("the form ended before its closing boundary");
      }
    }
    int n = Math.min(len, pending.remaining());
    pending.get(b, off, n);
    return n;
  }

  /**
   * Parses the next piece of the body.
   *
   * @return false when the body had ended already
   */
  private boolean feed() throws IOException {
    if (bodyEnded) {
      return false;
    }
    int n = body.read(input);
    if (n > 0) {
      bodyBytes += n;
      if (bodyBytes > maxBodyBytes) {
        throw new PysandboxException(
            ErrorCode.PAYLOAD_TOO_LARGE,
            "the form is over " + maxBodyBytes + " bytes (upload_max_bytes + 64 KiB for the form)");
      }
    }
    if (n < 0) {
      bodyEnded = true;
      parser.parse(Content.Chunk.EOF);
    } else {
      // A chunk that can be retained, so that the parser slices it rather than copying it; the
      // buffer is reused for the next feed, once this one's content has been taken.
      parser.parse(Content.Chunk.from(ByteBuffer.wrap(input, 0, n), false));
    }
    if (listener.failure != null) {
      throw listener.failure;
    }
    return true;
  }

  private void take(ByteBuffer content) {
    if (pending.capacity() - pending.remaining() < content.remaining()) {
      ByteBuffer bigger = ByteBuffer.allocate(pending.remaining() + content.remaining());
      bigger.put(pending).flip();
      pending = bigger;
    }
    pending.compact().put(content).flip();
  }

  /** Keeps what the parser finds; the parser swallows what a listener throws, so it is kept too. */
  private final class Listener extends MultiPart.AbstractPartsListener {
    int parts;
    boolean complete;
    PysandboxException failure;

    @Override
    public void onPartBegin() {
      parts++;
      if (parts > 1) {
        fail("the form has more than one part; send one part named '" + PART + "'");
      }
    }

    @Override
    public void onPartHeaders() {
      if (!PART.equals(getName()) || getFileName() == null) {
        fail(
            "the form's part "
                + PysandboxException.quote(getName())
                + (getFileName() == null ? " has no filename" : "")
                + "; send one part named '"
                + PART
                + "' with a filename");
        return;
      }
      filename = getFileName();
    }

    /**
     * Copies the content out at once. The chunk is not released: it is a slice of a buffer of ours
     * that no pool owns, or one the parser made (and releases itself in this Jetty version; a
     * second release fails the parse).
     */
    @Override
    public void onPartContent(Content.Chunk chunk) {
      if (failure == null && chunk.hasRemaining()) {
        take(chunk.getByteBuffer());
      }
    }

    @Override
    public void onPart(String name, String fileName, HttpFields headers) {
      // the part's end: nothing to keep (its content went out as it came)
    }

    @Override
    public void onComplete() {
      complete = true;
    }

    @Override
    public void onFailure(Throwable cause) {
      fail("the form is malformed: " + cause.getMessage());
    }

    private void fail(String message) {
      if (failure == null) {
        failure = PysandboxException.invalid(message);
      }
    }
  }
}
