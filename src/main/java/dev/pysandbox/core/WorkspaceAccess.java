package dev.pysandbox.core;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileInfo;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.backend.HostUser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads and writes files the code can also touch, without trusting anything it made: every path is
 * checked at the edge, every directory is opened relative to its parent with O_NOFOLLOW, and a
 * symbolic link anywhere on the way is refused rather than followed. A write goes to a temporary
 * name and is renamed into place, so that a link the code planted is replaced, never written
 * through.
 */
final class WorkspaceAccess {
  private static final Pattern FILENAME = Pattern.compile("[A-Za-z0-9._-]{1,255}");
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

  private WorkspaceAccess() {}

  /** Letters, digits, '.', '_', '-'; 1-255 characters; no "..", not "." alone. */
  static String validateFilename(String filename) {
    if (filename == null
        || !FILENAME.matcher(filename).matches()
        || filename.contains("..")
        || filename.equals(".")) {
      throw PysandboxException.invalid(
          "filename "
              + quote(filename)
              + " is invalid: use 1-255 letters, digits, '.', '_' or '-', without '..' (no"
              + " directories)");
    }
    return filename;
  }

  /** A relative path of plain names: no leading '/', no '.' or '..' parts, no NUL. */
  static List<String> validatePath(String path) {
    if (path == null || path.isEmpty() || path.length() > 4096 || path.indexOf('\0') >= 0) {
      throw PysandboxException.invalid("path " + quote(path) + " is invalid");
    }
    if (path.startsWith("/")) {
      throw PysandboxException.invalid(
          "path " + quote(path) + " is absolute; give it relative to /mnt/data");
    }
    List<String> parts = new ArrayList<>();
    for (String part : path.split("/", -1)) {
      if (part.isEmpty() || part.equals(".") || part.equals("..")) {
        throw PysandboxException.invalid(
            "path " + quote(path) + " must be a plain relative path inside /mnt/data (no '..')");
      }
      parts.add(part);
    }
    return parts;
  }

  /**
   * Writes one file at the top of the workspace, owned by the sandbox user.
   *
   * @param owner the sandbox user, or {@code null} when the server itself is that user
   */
  static UploadResult write(
      String sessionId,
      Path workspace,
      String filename,
      byte[] data,
      boolean overwrite,
      HostUser owner) {
    try (DirectoryStream<Path> top = Files.newDirectoryStream(workspace)) {
      SecureDirectoryStream<Path> dir = secure(top);
      Path name = Path.of(filename);
      BasicFileAttributes existing = attributes(dir, name);
      if (existing != null && !overwrite) {
        throw new PysandboxException(
            ErrorCode.FILE_EXISTS,
            filename
                + " already exists in session '"
                + sessionId
                + "'; pass overwrite=true to replace it");
      }
      if (existing != null && existing.isDirectory()) {
        throw PysandboxException.invalid(
            filename + " is a directory in session '" + sessionId + "'");
      }
      Path tmp = Path.of(".pysandbox-upload-" + HexFormat.of().formatHex(randomBytes(8)));
      try (SeekableByteChannel ch =
          dir.newByteChannel(
              tmp, Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW, NOFOLLOW))) {
        ByteBuffer buf = ByteBuffer.wrap(data);
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
      } catch (IOException e) {
        try {
          dir.deleteFile(tmp);
        } catch (IOException gone) {
          // never created
        }
        throw e;
      }
      if (owner != null) {
        PosixFileAttributeView view =
            dir.getFileAttributeView(tmp, PosixFileAttributeView.class, NOFOLLOW);
        UserPrincipalLookupService users = FileSystems.getDefault().getUserPrincipalLookupService();
        view.setOwner(users.lookupPrincipalByName(owner.name()));
        view.setGroup(users.lookupPrincipalByGroupName(Integer.toString(owner.gid())));
      }
      dir.move(tmp, dir, name);
      return new UploadResult(
          sessionId,
          filename,
          data.length,
          sha256(data),
          WorkspaceFiles.mediaType(filename),
          existing != null);
    } catch (IOException e) {
      String why = String.valueOf(e.getMessage());
      if (why.contains("No space left") || why.contains("Disk quota exceeded")) {
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE,
            "could not write "
                + filename
                + " into session '"
                + sessionId
                + "': the host's disk that holds the workspaces is full ("
                + why
                + "); nothing was written; try again when there is space",
            e);
      }
      throw new PysandboxException(
          ErrorCode.INTERNAL,
          "could not write " + filename + " into session '" + sessionId + "': " + why,
          e);
    }
  }

  /** The files of a snapshot, as the API lists them. */
  static List<FileInfo> list(Map<String, WorkspaceFiles.FileState> snapshot) {
    List<FileInfo> out = new ArrayList<>();
    snapshot.forEach(
        (path, f) ->
            out.add(new FileInfo(path, f.size(), f.sha256(), WorkspaceFiles.mediaType(path))));
    return out;
  }

  /** What to do with one regular file, opened without following links. */
  @FunctionalInterface
  private interface FileAction<T> {
    T apply(BasicFileAttributes attributes, SeekableByteChannel channel) throws IOException;
  }

  /**
   * Opens one regular file under {@code root}, each directory relative to its parent with
   * O_NOFOLLOW.
   *
   * @throws PysandboxException {@code not_found}, {@code forbidden} (a symbolic link on the way),
   *     {@code invalid_argument} (a directory)
   */
  private static <T> T withFile(Path root, String path, String where, FileAction<T> action) {
    List<String> parts = validatePath(path);
    List<SecureDirectoryStream<Path>> opened = new ArrayList<>();
    try (DirectoryStream<Path> top = Files.newDirectoryStream(root)) {
      SecureDirectoryStream<Path> dir = secure(top);
      for (int i = 0; i < parts.size() - 1; i++) {
        Path name = Path.of(parts.get(i));
        BasicFileAttributes a = attributes(dir, name);
        refuseSpecial(a, path, where, String.join("/", parts.subList(0, i + 1)));
        if (!a.isDirectory()) {
          throw notFound(path, where);
        }
        dir = dir.newDirectoryStream(name, NOFOLLOW);
        opened.add(dir);
      }
      Path name = Path.of(parts.get(parts.size() - 1));
      BasicFileAttributes a = attributes(dir, name);
      refuseSpecial(a, path, where, path);
      if (a.isDirectory()) {
        throw PysandboxException.invalid(path + " is a directory in " + where + "; name a file");
      }
      try (SeekableByteChannel ch =
          dir.newByteChannel(name, Set.of(StandardOpenOption.READ, NOFOLLOW))) {
        return action.apply(a, ch);
      }
    } catch (NoSuchFileException e) {
      throw notFound(path, where);
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.INTERNAL, "could not read " + path + ": " + e.getMessage(), e);
    } finally {
      for (SecureDirectoryStream<Path> d : opened) {
        try {
          d.close();
        } catch (IOException e) {
          // closing a directory handle
        }
      }
    }
  }

  /**
   * Reads one regular file under {@code root}.
   *
   * @throws PysandboxException as {@link #withFile}, and {@code artifact_too_large}
   */
  static ArtifactContent read(Path root, String path, long maxSizeBytes, String where) {
    return withFile(
        root,
        path,
        where,
        (a, ch) -> {
          long size = ch.size();
          if (size > maxSizeBytes) {
            throw new PysandboxException(
                ErrorCode.ARTIFACT_TOO_LARGE,
                path + " is " + size + " bytes, over max_size_bytes " + maxSizeBytes);
          }
          ByteBuffer buf = ByteBuffer.allocate((int) size);
          while (buf.hasRemaining() && ch.read(buf) > 0) {
            // read on
          }
          return content(path, java.util.Arrays.copyOf(buf.array(), buf.position()));
        });
  }

  /** Copies one file of the workspace to the same relative path under {@code target}. */
  static void copyOut(Path root, String path, Path target) {
    Path out = target.resolve(path).normalize();
    if (!out.startsWith(target)) {
      throw PysandboxException.invalid("path " + quote(path) + " leaves " + target);
    }
    withFile(
        root,
        path,
        "the workspace",
        (a, ch) -> {
          Files.createDirectories(out.getParent());
          try (var dst =
              Files.newByteChannel(
                  out,
                  StandardOpenOption.CREATE,
                  StandardOpenOption.WRITE,
                  StandardOpenOption.TRUNCATE_EXISTING,
                  NOFOLLOW)) {
            ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
            while (ch.read(buf) > 0) {
              buf.flip();
              while (buf.hasRemaining()) {
                dst.write(buf);
              }
              buf.clear();
            }
          }
          return null;
        });
  }

  private static void refuseSpecial(BasicFileAttributes a, String path, String where, String part) {
    if (a == null) {
      throw notFound(path, where);
    }
    if (a.isSymbolicLink()) {
      throw new PysandboxException(
          ErrorCode.FORBIDDEN,
          part + " is a symbolic link in " + where + "; links are never followed");
    }
    if (!a.isDirectory() && !a.isRegularFile()) {
      throw new PysandboxException(ErrorCode.FORBIDDEN, part + " is not a regular file");
    }
  }

  static ArtifactContent content(String path, byte[] data) {
    String text = utf8Text(data);
    return new ArtifactContent(
        path,
        WorkspaceFiles.mediaType(path),
        data.length,
        sha256(data),
        text,
        text == null ? Base64.getEncoder().encodeToString(data) : null);
  }

  /** The text, when the bytes are UTF-8 without NUL; else {@code null}. */
  private static String utf8Text(byte[] data) {
    for (byte b : data) {
      if (b == 0) {
        return null;
      }
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(data))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  private static BasicFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name) {
    try {
      return dir.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW)
          .readAttributes();
    } catch (IOException e) {
      return null;
    }
  }

  private static SecureDirectoryStream<Path> secure(DirectoryStream<Path> ds) {
    if (ds instanceof SecureDirectoryStream<Path> s) {
      return s;
    }
    throw new IllegalStateException("this platform has no SecureDirectoryStream");
  }

  private static PysandboxException notFound(String path, String where) {
    return new PysandboxException(ErrorCode.NOT_FOUND, "no file " + path + " in " + where);
  }

  static String sha256(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }

  private static String quote(String s) {
    if (s == null) {
      return "(missing)";
    }
    return "'" + (s.length() > 80 ? s.substring(0, 80) + "..." : s) + "'";
  }
}
