package dev.pysandbox.util;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 as pysandbox writes it everywhere (code hashes, file and image hashes, content-addressed
 * file names): 64 lowercase hex digits.
 */
public final class Sha256 {
  private Sha256() {}

  /** The hash of {@code bytes}, in lowercase hex. */
  public static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(newDigest().digest(bytes));
  }

  /** The hash of {@code text}'s UTF-8 bytes, in lowercase hex. */
  public static String hex(String text) {
    return hex(text.getBytes(StandardCharsets.UTF_8));
  }

  /** A fresh digest, for hashing as data streams by; every JVM has SHA-256. */
  public static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
  }
}
