package dev.pysandbox.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;

/**
 * Reads the agent provider's API key from {@code agent_api_key_file}, and checks a key from either
 * place. Why so strict: the file is opened without following a symbolic link (a link planted where
 * the key was expected must not make the server read, and send to a model provider, some other
 * file), it must not lie in {@code data_dir} (whose workspaces the sandboxes write), and it holds
 * the key alone (16 KiB at most). The messages say what is wrong with the file, never what is in
 * it.
 */
final class ApiKeyFile {
  /** The largest key file, and the longest key. */
  static final int MAX_BYTES = 16 * 1024;

  private ApiKeyFile() {}

  /**
   * The key in {@code file}, trimmed.
   *
   * @throws IllegalArgumentException saying what is wrong with the file, not what it holds
   */
  static String read(Path file, Path dataDir) {
    if (!file.isAbsolute()) {
      throw new IllegalArgumentException("must be an absolute path");
    }
    Path normal = file.normalize();
    if (normal.getParent() == null) {
      throw new IllegalArgumentException("not a regular file");
    }
    Path real;
    try {
      real = normal.getParent().toRealPath().resolve(normal.getFileName());
    } catch (IOException e) {
      throw new IllegalArgumentException("no such file (no directory " + normal.getParent() + ")");
    }
    Path data = dataDir.toAbsolutePath().normalize();
    Path dataReal = data;
    try {
      dataReal = data.toRealPath();
    } catch (IOException e) {
      // Not created yet: its path as written is all there is to compare.
    }
    if (normal.startsWith(data) || real.startsWith(dataReal)) {
      throw new IllegalArgumentException(
          "lies inside data_dir "
              + data
              + ", whose workspaces the sandboxes write: keep the key file outside it");
    }
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(real, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      throw unreadable(e);
    }
    if (attributes.isSymbolicLink()) {
      throw new IllegalArgumentException(
          "is a symbolic link, which is not followed: name the key file itself");
    }
    if (!attributes.isRegularFile()) {
      throw new IllegalArgumentException("not a regular file");
    }
    ByteBuffer buffer = ByteBuffer.allocate(MAX_BYTES + 1);
    try (SeekableByteChannel channel =
        Files.newByteChannel(real, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
      while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
        // until the end of the file, or one byte past the most a key file may hold
      }
    } catch (IOException e) {
      throw unreadable(e);
    }
    if (buffer.position() > MAX_BYTES) {
      throw new IllegalArgumentException(
          "larger than " + MAX_BYTES / 1024 + " KiB: a key file holds the key alone");
    }
    buffer.flip();
    CharBuffer text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(buffer);
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("not UTF-8 text");
    }
    return checked(text.toString());
  }

  /**
   * The key trimmed, when it is one: not empty, at most {@link #MAX_BYTES} characters, with no
   * space, line break or control character inside.
   *
   * @throws IllegalArgumentException saying what is wrong, never showing the key
   */
  static String checked(String key) {
    String k = key.strip();
    if (k.isEmpty()) {
      throw new IllegalArgumentException("the key is empty");
    }
    if (k.length() > MAX_BYTES) {
      throw new IllegalArgumentException("the key is longer than " + MAX_BYTES + " characters");
    }
    if (k.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
      throw new IllegalArgumentException(
          "the key has a space, line break or control character inside it: a key file holds the"
              + " key alone, on one line");
    }
    return k;
  }

  private static IllegalArgumentException unreadable(IOException e) {
    if (e instanceof NoSuchFileException) {
      return new IllegalArgumentException("no such file");
    }
    if (e instanceof AccessDeniedException) {
      return new IllegalArgumentException("cannot be read: permission denied to the server's user");
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      // O_NOFOLLOW on a link swapped in after the check: ELOOP, "Too many levels of symbolic links"
      return new IllegalArgumentException("cannot be read: " + f.getReason());
    }
    return new IllegalArgumentException("cannot be read: " + e.getClass().getSimpleName());
  }
}
