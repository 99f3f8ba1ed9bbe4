package dev.pysandbox.util;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Unguessable random ids (run, session and request ids, server instances, temporary names): hex
 * digits from one shared {@link SecureRandom}, which is thread-safe.
 */
public final class RandomIds {
  private static final SecureRandom RANDOM = new SecureRandom();

  private RandomIds() {}

  /** {@code bytes} random bytes as {@code 2 * bytes} lowercase hex digits. */
  public static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
