package dev.pysandbox.http;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * A request whose body, read as a stream or as text, tells a counter what each read returned (the
 * bytes read, or -1 at its end): for the filters that watch a body as the servlet reads it (its
 * limit, its pace). The counter may throw to fail the read.
 */
final class CountedBody extends HttpServletRequestWrapper {
  /** Told each read's result. */
  @FunctionalInterface
  interface Counter {
    void count(int n) throws IOException;
  }

  private final Counter counter;
  private ServletInputStream stream;

  CountedBody(HttpServletRequest request, Counter counter) {
    super(request);
    this.counter = counter;
  }

  @Override
  public ServletInputStream getInputStream() throws IOException {
    if (stream == null) {
      stream = new Counted(super.getInputStream());
    }
    return stream;
  }

  @Override
  public BufferedReader getReader() throws IOException {
    String encoding = getCharacterEncoding();
    Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
    return new BufferedReader(new InputStreamReader(getInputStream(), charset));
  }

  /** The body's stream, telling this request's counter. */
  private final class Counted extends ServletInputStream {
    private final ServletInputStream in;

    Counted(ServletInputStream in) {
      this.in = in;
    }

    @Override
    public int read() throws IOException {
      int b = in.read();
      counter.count(b < 0 ? -1 : 1);
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = in.read(b, off, len);
      counter.count(n);
      return n;
    }

    @Override
    public boolean isFinished() {
      return in.isFinished();
    }

    @Override
    public boolean isReady() {
      return in.isReady();
    }

    @Override
    public void setReadListener(ReadListener listener) {
      in.setReadListener(listener);
    }
  }
}
