package dev.pysandbox.util;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Bytes as text only when they are UTF-8: a malformed or unmappable sequence makes no text, where
 * {@code new String(bytes, UTF_8)} would quietly put U+FFFD in its place (a file name, a file's
 * content or a percent-decoded path would then name or show something other than what is there).
 * One decoder for every place that must tell UTF-8 from the rest.
 */
public final class StrictUtf8 {
  private StrictUtf8() {}

  /** The text {@code bytes} encode, or {@code null} when they are not UTF-8. */
  public static String decode(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
