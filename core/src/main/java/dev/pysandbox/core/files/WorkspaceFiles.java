package dev.pysandbox.core.files;

import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLConnection;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Looks at workspaces from the host without trusting anything the code made: every walk is a {@link
 * TreeWalk} (by descriptor, never following a link, no path-length or stack limit), every file is
 * opened with {@code O_NOFOLLOW | O_NONBLOCK} and checked on the descriptor, and sizes are what the
 * disk holds ({@code st_blocks}), so links, directories and sparse files count as what they cost.
 * Removing a tree the code made is {@link TreeDeletion}'s.
 */
public final class WorkspaceFiles {
  /** Most entries (files, and things not kept) listed per workspace; the rest is counted only. */
  static final int MAX_FILES = 10_000;

  /** Most characters of paths listed per workspace (deep trees of long names). */
  static final long MAX_LISTED_CHARS = 8L << 20;

  static final String TOO_DEEP =
      "a directory nested deeper than "
          + TreeWalk.LIST_DEPTH
          + " levels: what it holds counts against the disk quota but is not listed or kept";
  static final String LEASED =
      "held by a file lease the code took: the server does not wait for it, so it was not read";
  static final String NOT_UTF8 = "a name that is not UTF-8: not listed or kept";

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

  /**
   * One entry as last seen: a regular file (with its hash, unless the snapshot was taken without
   * hashing), or something that is not kept, with the reason.
   */
  public record FileState(
      long size, long modifiedNanos, Stat.Key fileKey, String sha256, String skipped) {
    static FileState notKept(String reason) {
      return new FileState(0, 0, null, null, reason);
    }

    /**
     * A regular file the budget left unhashed: its metadata is kept, so that the next snapshot
     * tells whether it changed since.
     */
    static FileState notHashed(Stat st, String reason) {
      return new FileState(st.size(), st.mtimeNanos(), st.key(), null, reason);
    }

    boolean isFile() {
      return skipped == null;
    }
  }

  /**
   * A workspace as last seen.
   *
   * @param files by path relative to the root, in path order
   * @param allocatedBytes what everything under the root takes on disk, however deep
   */
  public record Snapshot(Map<String, FileState> files, long allocatedBytes) {
    static final Snapshot EMPTY = new Snapshot(Map.of(), 0);
  }

  private WorkspaceFiles() {}

  /**
   * Every entry under {@code root} down to {@link TreeWalk#LIST_DEPTH} levels (at most {@link
   * #MAX_FILES}), by path relative to it, and the disk space of everything. Hashes are reused from
   * {@code previous} when size, modification time and inode are unchanged; changed files are hashed
   * when {@code hash} is true (else their hash is {@code null}).
   */
  public static Snapshot snapshot(Path root, Map<String, FileState> previous, boolean hash) {
    return snapshot(root, previous, hash, CollectBudget.unlimited());
  }

  /**
   * As {@link #snapshot(Path, Map, boolean)}, hashing within {@code spend}: a changed file past it
   * is listed as not hashed (and so not kept), with the reason; the walk itself (metadata only,
   * bounded by {@link TreeWalk#MAX_ENTRIES}) always completes, so that nothing unseen looks
   * deleted.
   */
  public static Snapshot snapshot(
      Path root, Map<String, FileState> previous, boolean hash, CollectBudget spend) {
    Map<String, FileState> out = new TreeMap<>();
    long[] total = {0};
    try (Descriptor top = Descriptor.openDirectory(root)) {
      total[0] = top.stat().allocated();
      TreeWalk.walk(
          top,
          new TreeWalk.Visitor() {
            long chars;

            @Override
            public boolean wantsPaths() {
              return out.size() < MAX_FILES && chars < MAX_LISTED_CHARS;
            }

            @Override
            public boolean entry(Descriptor dir, byte[] name, String path, Stat st, int depth)
                throws IOException {
              total[0] += st.allocated();
              if (path == null || st.isDirectory() || !wantsPaths()) {
                return st.isDirectory();
              }
              chars += path.length();
              FileState f =
                  st.isRegular()
                      ? regular(dir, name, st, previous.get(path), hash, spend)
                      : FileState.notKept(st.kind() + ": only regular files are kept");
              if (f != null) {
                out.put(path, f);
              }
              return false;
            }

            @Override
            public void tooDeep(String path) {
              if (wantsPaths()) {
                out.put(path, FileState.notKept(TOO_DEEP));
              }
            }

            @Override
            public void notUtf8(String path) {
              if (wantsPaths()) {
                out.put(path, FileState.notKept(NOT_UTF8));
              }
            }
          });
    } catch (Descriptor.ErrnoException e) {
      if (e.errno() == NativeFs.enoent()) {
        return Snapshot.EMPTY;
      }
      throw new UncheckedIOException("cannot scan workspace " + root, e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot scan workspace " + root, e);
    }
    return new Snapshot(out, total[0]);
  }

  /** A regular file, hashed through a descriptor opened without blocking; null when it is gone. */
  private static FileState regular(
      Descriptor dir, byte[] name, Stat st, FileState before, boolean hash, CollectBudget spend)
      throws IOException {
    if (before != null
        && before.isFile()
        && before.sha256() != null
        && before.size() == st.size()
        && before.modifiedNanos() == st.mtimeNanos()
        && Objects.equals(before.fileKey(), st.key())) {
      return before;
    }
    if (!hash) {
      return new FileState(st.size(), st.mtimeNanos(), st.key(), null, null);
    }
    String refused = spend.refuse(st.size());
    if (refused != null) {
      spend.skipped(refused);
      return FileState.notHashed(st, refused);
    }
    try (Descriptor f = dir.openFile(name)) {
      Stat now = f.stat();
      if (!now.isRegular()) {
        return FileState.notKept(now.kind() + ": only regular files are kept");
      }
      return new FileState(
          now.size(), now.mtimeNanos(), now.key(), FileContents.sha256(f, now.size(), spend), null);
    } catch (CollectBudget.Spent e) {
      spend.skipped(e.getMessage());
      return FileState.notHashed(st, e.getMessage());
    } catch (Descriptor.ErrnoException e) {
      String why = whyNotOpened(e);
      return why == null ? null : FileState.notKept(why);
    }
  }

  /**
   * Why a non-blocking, non-following open of an entry failed, in words; {@code null} when it is
   * simply gone.
   */
  public static String whyNotOpened(Descriptor.ErrnoException e) {
    if (e.errno() == NativeFs.enoent()) {
      return null;
    }
    if (e.errno() == NativeFs.eloop()) {
      return "a symbolic link: only regular files are kept";
    }
    if (e.errno() == NativeFs.eagain()) {
      return LEASED;
    }
    if (e.errno() == NativeFs.enxio()) {
      return "a socket: only regular files are kept";
    }
    return "could not be read (" + e.getMessage() + ")";
  }

  /**
   * What the tree under {@code root} takes on disk (allocated blocks of every inode, links not
   * followed, however deep), counting stops once past {@code stopAbove}; cheap enough to poll while
   * a run writes. A tree too large to walk ({@link TreeWalk#MAX_ENTRIES} entries, {@link
   * TreeWalk#MAX_DEPTH} levels) counts as past {@code stopAbove}.
   */
  public static long totalBytes(Path root, long stopAbove) {
    long[] total = {0};
    try (Descriptor top = Descriptor.openDirectory(root)) {
      total[0] = top.stat().allocated();
      TreeWalk.Outcome o =
          TreeWalk.walk(
              top,
              new TreeWalk.PathlessVisitor() {
                @Override
                public boolean entry(Descriptor dir, byte[] name, String path, Stat st, int depth) {
                  total[0] += st.allocated();
                  return true;
                }

                @Override
                public boolean stop() {
                  return total[0] > stopAbove;
                }
              });
      if (o == TreeWalk.Outcome.TOO_LARGE && stopAbove < Long.MAX_VALUE) {
        total[0] = Math.max(total[0], stopAbove + 1);
      }
    } catch (IOException e) {
      // vanished while counting: what was counted stands
    }
    return total[0];
  }

  /** What changed between two snapshots, as artifacts, in path order. */
  public static List<Artifact> diff(Map<String, FileState> before, Map<String, FileState> after) {
    List<Artifact> out = new ArrayList<>();
    for (Map.Entry<String, FileState> e : after.entrySet()) {
      FileState old = before.get(e.getKey());
      FileState now = e.getValue();
      if (old != null && same(old, now)) {
        continue;
      }
      out.add(
          new Artifact(
              e.getKey(),
              now.size(),
              now.sha256(),
              mediaType(e.getKey()),
              old == null ? ArtifactChange.CREATED : ArtifactChange.MODIFIED,
              now.skipped()));
    }
    for (Map.Entry<String, FileState> gone : before.entrySet()) {
      if (gone.getValue().isFile() && !after.containsKey(gone.getKey())) {
        out.add(
            new Artifact(gone.getKey(), 0, null, mediaType(gone.getKey()), ArtifactChange.DELETED));
      }
    }
    out.sort((a, b) -> a.path().compareTo(b.path()));
    return out;
  }

  private static boolean same(FileState old, FileState now) {
    if (!now.isFile()) {
      // A file left unhashed keeps its metadata: unchanged only if that is unchanged too.
      return now.skipped().equals(old.skipped())
          && old.size() == now.size()
          && old.modifiedNanos() == now.modifiedNanos()
          && Objects.equals(old.fileKey(), now.fileKey());
    }
    return old.isFile() && old.sha256() != null && old.sha256().equals(now.sha256());
  }

  public static String mediaType(String path) {
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
  public static boolean isEmpty(Path dir) {
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      return !s.iterator().hasNext();
    } catch (IOException e) {
      return false;
    }
  }
}
