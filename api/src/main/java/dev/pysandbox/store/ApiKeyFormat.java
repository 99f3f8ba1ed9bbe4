package dev.pysandbox.store;

import dev.pysandbox.util.Ascii;
import dev.pysandbox.util.Sha256;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * What an API key looks like, how one is made and how it is stored, for every {@link ApiKeys}
 * implementation: {@code psk_} and 43 base64url characters without padding (32 bytes from {@link
 * SecureRandom}), kept only as the lowercase hex SHA-256 of the whole key's UTF-8 bytes. The prefix
 * lets secret scanners and people recognise a key; a fixed shape lets {@link ApiKeys#authenticate}
 * refuse junk before hashing or reading anything.
 */
public final class ApiKeyFormat {
  public static final String PREFIX = "psk_";

  /** The shape of a key, unanchored (use it with {@code matches()}). */
  public static final String REGEX = "psk_[A-Za-z0-9_-]{43}";

  public static final Pattern PATTERN = Pattern.compile(REGEX);

  private static final int KEY_BYTES = 32;
  private static final int LENGTH = PREFIX.length() + 43;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

  private ApiKeyFormat() {}

  /** A new random key. */
  public static String newKey() {
    byte[] bytes = new byte[KEY_BYTES];
    RANDOM.nextBytes(bytes);
    return PREFIX + ENCODER.encodeToString(bytes);
  }

  /**
   * Whether {@code presented} has a key's shape ({@link #REGEX}); null is not. Checked by hand,
   * since it runs on every request, and kept equal to the pattern by a test.
   */
  public static boolean isWellFormed(String presented) {
    if (presented == null || presented.length() != LENGTH || !presented.startsWith(PREFIX)) {
      return false;
    }
    for (int i = PREFIX.length(); i < LENGTH; i++) {
      char c = presented.charAt(i);
      boolean ok = Ascii.isLetterOrDigit(c) || c == '_' || c == '-';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /** What the store keeps of {@code key}: the hex SHA-256 of its UTF-8 bytes. */
  public static String hash(String key) {
    return Sha256.hex(key);
  }
}
