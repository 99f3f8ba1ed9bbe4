package dev.pysandbox.egress;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Speaks raw HTTP/1.1 to a door's Unix socket, as the forwarder would pass it on: so that tests
 * control every byte of a request (absolute-form, CONNECT, odd headers) and see every byte back.
 */
final class UnixProxyClient {
  private UnixProxyClient() {}

  /** Sends one request and reads until the proxy closes the connection. */
  static String exchange(Path socket, String request) throws IOException {
    try (SocketChannel channel = connect(socket)) {
      write(channel, request);
      return new String(readToEnd(channel), StandardCharsets.ISO_8859_1);
    }
  }

  static SocketChannel connect(Path socket) throws IOException {
    SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    channel.connect(UnixDomainSocketAddress.of(socket));
    return channel;
  }

  /** Opens a CONNECT tunnel; returns the channel after the response head, or throws with it. */
  static SocketChannel tunnel(Path socket, String authority) throws IOException {
    SocketChannel channel = connect(socket);
    write(channel, "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
    String head = readHead(channel);
    if (!head.startsWith("HTTP/1.1 200")) {
      channel.close();
      throw new IOException("no tunnel: " + head);
    }
    return channel;
  }

  static void write(SocketChannel channel, String text) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1));
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  /** Reads the status line and headers, up to and including the blank line. */
  static String readHead(SocketChannel channel) throws IOException {
    StringBuilder head = new StringBuilder();
    ByteBuffer one = ByteBuffer.allocate(1);
    while (!head.toString().endsWith("\r\n\r\n")) {
      one.clear();
      if (channel.read(one) < 0) {
        break;
      }
      head.append((char) one.get(0));
    }
    return head.toString();
  }

  /** Reads exactly {@code n} bytes, or fewer if the channel ends first. */
  static String read(SocketChannel channel, int n) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(n);
    while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
      // keep reading
    }
    return new String(buffer.array(), 0, buffer.position(), StandardCharsets.ISO_8859_1);
  }

  static byte[] readToEnd(SocketChannel channel) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteBuffer buffer = ByteBuffer.allocate(8192);
    while (channel.read(buffer) >= 0) {
      out.write(buffer.array(), 0, buffer.position());
      buffer.clear();
    }
    return out.toByteArray();
  }

  /** The body of a response read whole: everything after the head. */
  static String body(String response) {
    int end = response.indexOf("\r\n\r\n");
    return end < 0 ? "" : response.substring(end + 4);
  }
}
