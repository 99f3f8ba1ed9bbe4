package dev.pysandbox.core.files;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileInfo;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.Sha256;
import dev.pysandbox.util.StrictUtf8;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Reads and writes files the code can also touch, without trusting anything it made: every path is
 * checked at the edge; a read opens each directory relative to its parent with O_NOFOLLOW and the
 * file with O_NOFOLLOW | O_NONBLOCK ({@link Descriptor}), then checks what it opened on the
 * descriptor, so a link is refused rather than followed and a FIFO or a lease never makes it wait.
 * Writes are {@link WorkspaceFileWriter}'s.
 */
public final class WorkspaceAccess {
  private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

  private WorkspaceAccess() {}

  /** A relative path of plain names: no leading '/', no '.' or '..' parts, no NUL. */
  public static List<String> validatePath(String path) {
    if (path == null || path.isEmpty() || path.length() > 4096 || path.indexOf('\0') >= 0) {
      throw PysandboxException.invalid("path " + PysandboxException.quote(path) + " is invalid");
    }
    if (path.startsWith("/")) {
      throw PysandboxException.invalid(
          "path " + PysandboxException.quote(path) + " is absolute; give it relative to /mnt/data");
    }
    List<String> parts = new ArrayList<>();
    for (String part : path.split("/", -1)) {
      if (part.isEmpty() || part.equals(".") || part.equals("..")) {
        throw PysandboxException.invalid(
            "path "
                + PysandboxException.quote(path)
                + " must be a plain relative path inside /mnt/data (no '..')");
      }
      parts.add(part);
    }
    return parts;
  }

  /** The files of a snapshot, as the API lists them (what is not kept is left out). */
  public static List<FileInfo> list(Map<String, WorkspaceFiles.FileState> snapshot) {
    List<FileInfo> out = new ArrayList<>();
    snapshot.forEach(
        (path, f) -> {
          if (f.isFile() && f.sha256() != null) {
            out.add(new FileInfo(path, f.size(), f.sha256(), WorkspaceFiles.mediaType(path)));
          }
        });
    return out;
  }

  /**
   * Reads one regular file under {@code root} (opened as {@link #openRegular} does). At most {@code
   * min(maxSizeBytes, readMaxBytes)} bytes are read, and only as many are held.
   *
   * @param readMaxBytes the server's cap ({@code read_max_bytes})
   * @throws PysandboxException {@code not_found}, {@code forbidden} (a link, a FIFO, a lease),
   *     {@code invalid_argument} (a directory), {@code artifact_too_large}
   */
  public static ArtifactContent read(
      Path root, String path, long maxSizeBytes, long readMaxBytes, String where) {
    return read(openRegular(root, path, where), path, maxSizeBytes, readMaxBytes, where);
  }

  /** As {@link #read(Path, String, long, long, String)}, of a file already opened (and closed). */
  public static ArtifactContent read(
      Opened opened, String path, long maxSizeBytes, long readMaxBytes, String where) {
    try (Descriptor file = opened.file()) {
      Stat st = opened.stat();
      long cap = Math.min(maxSizeBytes, readMaxBytes);
      if (st.size() > cap) {
        throw new PysandboxException(
            ErrorCode.ARTIFACT_TOO_LARGE,
            path
                + " is "
                + st.size()
                + " bytes, over "
                + (readMaxBytes < maxSizeBytes
                    ? "the server's read_max_bytes "
                        + readMaxBytes
                        + " (max_size_bytes is capped at it)"
                    : "max_size_bytes " + maxSizeBytes));
      }
      return content(path, readUpTo(file, (int) st.size()));
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.INTERNAL, "could not read " + path + " in " + where + ": " + e.getMessage(), e);
    }
  }

  /**
   * Opens one regular file under {@code root} for streaming, of any size: its hash is computed
   * through the descriptor (holes as zeros, unread), and its content is read through it.
   *
   * @throws PysandboxException as {@link #openRegular}
   */
  public static FileStream open(Path root, String path, String where) {
    return stream(openRegular(root, path, where), path, where);
  }

  /** As {@link #open(Path, String, String)}, of a file already opened (closed with the stream). */
  public static FileStream stream(Opened opened, String path, String where) {
    Descriptor file = opened.file();
    try {
      Stat st = opened.stat();
      String sha256 = FileContents.sha256(file, st.size());
      return new FileStream(
          path,
          WorkspaceFiles.mediaType(path),
          st.size(),
          sha256,
          Instant.EPOCH.plusNanos(st.mtimeNanos()),
          new DescriptorInputStream(file, st.size()));
    } catch (IOException | RuntimeException e) {
      file.close();
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new PysandboxException(
          ErrorCode.INTERNAL, "could not read " + path + " in " + where + ": " + e.getMessage(), e);
    }
  }

  /** A regular file opened by descriptor, and what {@code fstat} said about it. */
  public record Opened(Descriptor file, Stat stat) {}

  /**
   * Opens one regular file under {@code root}: each directory on the way opened relative to its
   * parent with O_NOFOLLOW, the file with O_NOFOLLOW | O_NONBLOCK (a FIFO or a leased file never
   * makes the call wait), and what was opened checked on its descriptor. The directories are closed
   * again; the caller closes the file.
   *
   * @throws PysandboxException {@code invalid_argument} (a path that is not plain and relative, a
   *     directory), {@code not_found}, {@code forbidden} (a link, a FIFO, a lease)
   */
  private static Opened openRegular(Path root, String path, String where) {
    List<String> parts = validatePath(path);
    List<Descriptor> opened = new ArrayList<>();
    Descriptor file = null;
    try {
      Descriptor dir;
      try {
        dir = Descriptor.openDirectory(root);
      } catch (Descriptor.ErrnoException e) {
        if (e.errno() == NativeFs.enoent()) {
          throw notFound(path, where);
        }
        throw e;
      }
      opened.add(dir);
      for (int i = 0; i < parts.size() - 1; i++) {
        byte[] name = parts.get(i).getBytes(StandardCharsets.UTF_8);
        try {
          dir = dir.openDirectory(name);
        } catch (Descriptor.ErrnoException e) {
          throw refused(e, dir, name, path, where, String.join("/", parts.subList(0, i + 1)));
        }
        opened.add(dir);
      }
      byte[] name = parts.get(parts.size() - 1).getBytes(StandardCharsets.UTF_8);
      try {
        file = dir.openFile(name);
      } catch (Descriptor.ErrnoException e) {
        throw refused(e, dir, name, path, where, path);
      }
      Stat st = file.stat();
      if (st.isDirectory()) {
        throw PysandboxException.invalid(path + " is a directory in " + where + "; name a file");
      }
      if (!st.isRegular()) {
        throw new PysandboxException(
            ErrorCode.FORBIDDEN,
            path + " is " + st.kind() + " in " + where + ", not a regular file");
      }
      Opened result = new Opened(file, st);
      file = null;
      return result;
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.INTERNAL, "could not read " + path + " in " + where + ": " + e.getMessage(), e);
    } finally {
      if (file != null) {
        file.close();
      }
      for (int i = opened.size() - 1; i >= 0; i--) {
        opened.get(i).close();
      }
    }
  }

  /** At most {@code size} bytes from the start of the file (fewer if it shrank meanwhile). */
  private static byte[] readUpTo(Descriptor file, int size) throws IOException {
    byte[] out = new byte[size];
    ByteBuffer chunk = ByteBuffer.allocateDirect(Math.max(1, Math.min(size, 64 * 1024)));
    int done = 0;
    while (done < size) {
      int n = file.read(chunk, Math.min(chunk.capacity(), size - done), done);
      if (n == 0) {
        return Arrays.copyOf(out, done);
      }
      chunk.get(0, out, done, n);
      done += n;
    }
    return out;
  }

  /** Why an entry on the way could not be opened, as the error the caller gets. */
  private static PysandboxException refused(
      Descriptor.ErrnoException e,
      Descriptor dir,
      byte[] name,
      String path,
      String where,
      String part) {
    if (e.errno() == NativeFs.enoent()) {
      return notFound(path, where);
    }
    if (e.errno() == NativeFs.eagain()) {
      return new PysandboxException(
          ErrorCode.FORBIDDEN,
          part + " in " + where + " is " + WorkspaceFiles.LEASED + "; try again later");
    }
    if (e.errno() == NativeFs.eloop() || e.errno() == NativeFs.enotdir()) {
      // Only to word the answer: the open has already refused whatever is there.
      Stat st;
      try {
        st = dir.stat(name);
      } catch (IOException gone) {
        st = null;
      }
      if (st == null || st.isRegular()) {
        return notFound(path, where);
      }
      if (!st.isDirectory()) {
        return new PysandboxException(
            ErrorCode.FORBIDDEN,
            part
                + " is "
                + st.kind()
                + " in "
                + where
                + (st.kind().equals("a symbolic link") ? "; links are never followed" : ""));
      }
    }
    if (e.errno() == NativeFs.enxio()) {
      return new PysandboxException(ErrorCode.FORBIDDEN, part + " is not a regular file");
    }
    return new PysandboxException(
        ErrorCode.INTERNAL, "could not read " + path + " in " + where + ": " + e.getMessage(), e);
  }

  static ArtifactContent content(String path, byte[] data) {
    String text = utf8Text(data);
    return new ArtifactContent(
        path,
        WorkspaceFiles.mediaType(path),
        data.length,
        Sha256.hex(data),
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
    return StrictUtf8.decode(data);
  }

  private static PysandboxException notFound(String path, String where) {
    return new PysandboxException(ErrorCode.NOT_FOUND, "no file " + path + " in " + where);
  }
}
