package dev.pysandbox.core;

import dev.pysandbox.api.Artifact;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLConnection;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Looks at workspaces from the host without ever following a link the code made: directories are
 * walked through {@link SecureDirectoryStream} (openat with O_NOFOLLOW underneath), so a symlink to
 * {@code /etc/passwd}, or a directory swapped for one mid-walk, is never read.
 */
final class WorkspaceFiles {
  /** Most files reported per run; a workspace with more is reported in part. */
  static final int MAX_FILES = 10_000;

  private static final Map<String, String> MEDIA_TYPES =
      Map.ofEntries(
          Map.entry("csv", "text/csv"),
          Map.entry("tsv", "text/tab-separated-values"),
          Map.entry("txt", "text/plain"),
          Map.entry("log", "text/plain"),
          Map.entry("md", "text/markdown"),
          Map.entry("py", "text/x-python"),
          Map.entry("json", "application/json"),
          Map.entry("jsonl", "application/jsonl"),
          Map.entry("ipynb", "application/x-ipynb+json"),
          Map.entry("html", "text/html"),
          Map.entry("xml", "application/xml"),
          Map.entry("yaml", "application/yaml"),
          Map.entry("yml", "application/yaml"),
          Map.entry("png", "image/png"),
          Map.entry("jpg", "image/jpeg"),
          Map.entry("jpeg", "image/jpeg"),
          Map.entry("gif", "image/gif"),
          Map.entry("svg", "image/svg+xml"),
          Map.entry("pdf", "application/pdf"),
          Map.entry("parquet", "application/vnd.apache.parquet"),
          Map.entry("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
          Map.entry("zip", "application/zip"),
          Map.entry("gz", "application/gzip"),
          Map.entry("npy", "application/octet-stream"),
          Map.entry("pkl", "application/octet-stream"));

  /** One regular file as last seen. */
  record FileState(long size, long modifiedNanos, Object fileKey, String sha256) {}

  private WorkspaceFiles() {}

  /**
   * Every regular file under {@code root}, by path relative to it. Hashes are reused from {@code
   * previous} when size, modification time and inode are unchanged.
   */
  static Map<String, FileState> snapshot(Path root, Map<String, FileState> previous) {
    Map<String, FileState> out = new TreeMap<>();
    try (DirectoryStream<Path> top = Files.newDirectoryStream(root)) {
      if (!(top instanceof SecureDirectoryStream<Path> secure)) {
        throw new IllegalStateException("this platform has no SecureDirectoryStream");
      }
      walk(secure, "", previous, out);
    } catch (NoSuchFileException e) {
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot scan workspace " + root, e);
    }
    return out;
  }

  private static void walk(
      SecureDirectoryStream<Path> dir,
      String prefix,
      Map<String, FileState> previous,
      Map<String, FileState> out)
      throws IOException {
    for (Path entry : dir) {
      if (out.size() >= MAX_FILES) {
        return;
      }
      Path name = entry.getFileName();
      String rel = prefix + name;
      BasicFileAttributes a;
      try {
        a =
            dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .readAttributes();
      } catch (IOException e) {
        continue;
      }
      if (a.isDirectory()) {
        try (SecureDirectoryStream<Path> sub =
            dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
          walk(sub, rel + "/", previous, out);
        } catch (IOException e) {
          // unreadable or vanished: skip it
        }
      } else if (a.isRegularFile()) {
        long modified = a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
        FileState before = previous.get(rel);
        String sha =
            before != null
                    && before.size() == a.size()
                    && before.modifiedNanos() == modified
                    && java.util.Objects.equals(before.fileKey(), a.fileKey())
                ? before.sha256()
                : sha256(dir, name);
        if (sha != null) {
          out.put(rel, new FileState(a.size(), modified, a.fileKey(), sha));
        }
      }
    }
  }

  /**
   * The total size of the regular files under {@code root} (links not followed), counting stops
   * once past {@code stopAbove}; cheap enough to poll while a run writes.
   */
  static long totalBytes(Path root, long stopAbove) {
    long[] total = {0};
    try {
      Files.walkFileTree(
          root,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes a) {
              if (a.isRegularFile()) {
                total[0] += a.size();
              }
              return total[0] > stopAbove ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      // vanished while counting: what was counted stands
    }
    return total[0];
  }

  private static String sha256(SecureDirectoryStream<Path> dir, Path name) {
    try (SeekableByteChannel ch =
        dir.newByteChannel(name, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
      while (ch.read(buf) > 0) {
        buf.flip();
        md.update(buf);
        buf.clear();
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (IOException e) {
      return null;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What changed between two snapshots, as artifacts, in path order. */
  static List<Artifact> diff(Map<String, FileState> before, Map<String, FileState> after) {
    List<Artifact> out = new ArrayList<>();
    for (Map.Entry<String, FileState> e : after.entrySet()) {
      FileState old = before.get(e.getKey());
      FileState now = e.getValue();
      if (old == null) {
        out.add(artifact(e.getKey(), now, "created"));
      } else if (!old.sha256().equals(now.sha256())) {
        out.add(artifact(e.getKey(), now, "modified"));
      }
    }
    for (String gone : before.keySet()) {
      if (!after.containsKey(gone)) {
        out.add(new Artifact(gone, 0, null, mediaType(gone), "deleted"));
      }
    }
    out.sort((a, b) -> a.path().compareTo(b.path()));
    return out;
  }

  private static Artifact artifact(String path, FileState s, String change) {
    return new Artifact(path, s.size(), s.sha256(), mediaType(path), change);
  }

  static String mediaType(String path) {
    String name = path.substring(path.lastIndexOf('/') + 1);
    int dot = name.lastIndexOf('.');
    if (dot >= 0) {
      String known = MEDIA_TYPES.get(name.substring(dot + 1).toLowerCase(java.util.Locale.ROOT));
      if (known != null) {
        return known;
      }
    }
    String guess = URLConnection.guessContentTypeFromName(name);
    return guess != null ? guess : "application/octet-stream";
  }

  /** True when the directory holds nothing at all. */
  static boolean isEmpty(Path dir) {
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      return !s.iterator().hasNext();
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Deletes a tree without following links, first giving the server back any directory the code
   * made unreadable.
   */
  static void deleteTree(Path root) {
    deleteTree(root, true);
  }

  private static void deleteTree(Path root, boolean mayRepair) {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try {
      Files.walkFileTree(
          root,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.deleteIfExists(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
              if (mayRepair && Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
                deleteTree(file, false);
              } else {
                Files.deleteIfExists(file);
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc)
                throws IOException {
              Files.deleteIfExists(dir);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + root, e);
    }
  }
}
