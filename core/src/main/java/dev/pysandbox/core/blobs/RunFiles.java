package dev.pysandbox.core.blobs;

import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import dev.pysandbox.api.Limits;
import dev.pysandbox.core.files.CollectBudget;
import dev.pysandbox.core.files.Descriptor;
import dev.pysandbox.core.files.FileContents;
import dev.pysandbox.core.files.Stat;
import dev.pysandbox.core.files.WorkspaceFiles;
import dev.pysandbox.util.DiskFullException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps the files a run created or changed: regular files only (opened without following a link and
 * without blocking, checked on the descriptor), without setuid, setgid or group/other write bits,
 * sparse files kept sparse, at most the disk quota of data per run, each recorded with the hash of
 * the copy actually kept, once the copy is synced to the disk whole. Where the copies go is a
 * {@link Destination}: the blob store for a run's files ({@link KeptBlobs}), a plain directory for
 * a workspace kept as it was ({@code keep_workspaces}). What is not kept is still listed, with the
 * reason in {@link Artifact#skipped()} (a full disk says which).
 */
public final class RunFiles {
  /**
   * The artifacts as kept.
   *
   * @param artifacts every change, in the order given; kept ones carry the copy's size and hash
   * @param kept whether anything was copied
   */
  public record Kept(List<Artifact> artifacts, boolean kept) {}

  /** Where the copies go. */
  public interface Destination extends AutoCloseable {
    /** Made ready before the first copy (nothing is made when nothing is kept). */
    void open() throws IOException;

    /** A new, empty file (created with O_EXCL | O_NOFOLLOW) for the copy of {@code parts}. */
    Copy create(String[] parts, int mode) throws IOException;

    /** Where the copies go, to say which disk is full. */
    Path where();

    /** Called once, after the last file: whether anything was kept. */
    void finish(boolean kept);

    @Override
    void close();
  }

  /** One copy being written. */
  interface Copy extends AutoCloseable {
    Descriptor file();

    /**
     * The copy is whole and synced: it is kept. Returns {@code null}, or why it is not kept after
     * all (it is then removed).
     */
    String commit(FileContents.Copied copied) throws IOException;

    /** Removes the copy (a failure, a budget spent). */
    void abandon();

    @Override
    void close();
  }

  private RunFiles() {}

  /**
   * Copies each created or modified file of {@code changes} from {@code workspace} to the same path
   * under the plain directory {@code target}, which is created if anything is kept.
   *
   * @param quotaBytes most bytes of data kept (the sandbox's disk quota)
   */
  public static Kept keep(Path workspace, List<Artifact> changes, Path target, long quotaBytes) {
    try (Destination to = new DirectoryDestination(target)) {
      return keep(workspace, changes, to, quotaBytes, "disk_quota_mb", CollectBudget.unlimited());
    }
  }

  /**
   * As {@link #keep(Path, List, Path, long)}, into {@code to}, the copies' hashing charged to
   * {@code spend} (a file past it is not kept: a copy cut short is removed, and it says why), with
   * the quota named by the setting that sets it ({@code disk_quota_mb} or {@code
   * kept_files_max_mb}) in what a file not kept says.
   */
  public static Kept keep(
      Path workspace,
      List<Artifact> changes,
      Destination to,
      long quotaBytes,
      String quotaSetting,
      CollectBudget spend) {
    List<Artifact> out = new ArrayList<>(changes.size());
    long left = quotaBytes;
    boolean kept = false;
    Descriptor from = null;
    try {
      for (Artifact a : changes) {
        if (a.change() == ArtifactChange.DELETED || a.skipped() != null) {
          out.add(a);
          continue;
        }
        if (from == null) {
          from = Descriptor.openDirectory(workspace);
          to.open();
        }
        One done;
        try {
          done = keepOne(from, a, to, left, quotaBytes, quotaSetting, spend);
        } catch (IOException e) {
          // This file only (a read error, a full disk for the copy): the others are still kept.
          DiskFullException full = DiskFullException.of(e, to.where(), a.sizeBytes());
          done =
              skipped(
                  a,
                  full != null
                      ? "not kept: the data directory's disk is full ("
                          + DiskFullException.describe(to.where())
                          + ")"
                      : "could not be kept (" + e.getMessage() + ")");
        }
        if (done.artifact().skipped() == null) {
          kept = true;
          left -= done.dataBytes();
        }
        out.add(done.artifact());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot keep the files in " + to.where(), e);
    } finally {
      if (from != null) {
        from.close();
      }
    }
    to.finish(kept);
    return new Kept(out, kept);
  }

  /** One file as kept (or not), and the bytes of data its copy took. */
  private record One(Artifact artifact, long dataBytes) {}

  private static One keepOne(
      Descriptor from,
      Artifact a,
      Destination to,
      long left,
      long quotaBytes,
      String quotaSetting,
      CollectBudget spend)
      throws IOException {
    String[] parts = a.path().split("/");
    List<Descriptor> opened = new ArrayList<>();
    try {
      Descriptor dir = from;
      for (int i = 0; i < parts.length - 1; i++) {
        try {
          dir = dir.openDirectory(bytes(parts[i]));
        } catch (Descriptor.ErrnoException e) {
          return skipped(a, "a directory on its path was removed or replaced while it was kept");
        }
        opened.add(dir);
      }
      byte[] name = bytes(parts[parts.length - 1]);
      Descriptor src;
      try {
        src = dir.openFile(name);
      } catch (Descriptor.ErrnoException e) {
        String why = WorkspaceFiles.whyNotOpened(e);
        return skipped(a, why == null ? "removed before it could be kept" : why);
      }
      opened.add(src);
      Stat st = src.stat();
      if (!st.isRegular()) {
        return skipped(a, st.kind() + ": only regular files are kept");
      }
      if (st.allocated() > left) {
        return skipped(a, overQuota(quotaBytes, quotaSetting));
      }
      String refused = spend.refuse(st.size());
      if (refused != null) {
        spend.skipped(refused);
        return skipped(a, refused);
      }
      try (Copy copy = to.create(parts, (st.permissions() & 0755) | 0600)) {
        FileContents.Copied c;
        try {
          c = FileContents.copy(src, st.size(), copy.file(), left, spend);
          if (!c.overBudget()) {
            // Recorded with its hash only once it is on the disk, whole.
            copy.file().sync();
            long size = copy.file().stat().size();
            if (size != c.size()) {
              throw new IOException("the copy holds " + size + " bytes, not " + c.size());
            }
          }
        } catch (CollectBudget.Spent e) {
          // Nothing of a file cut short is kept.
          copy.abandon();
          spend.skipped(e.getMessage());
          return skipped(a, e.getMessage());
        } catch (IOException e) {
          copy.abandon();
          throw e;
        }
        if (c.overBudget()) {
          copy.abandon();
          return skipped(a, overQuota(quotaBytes, quotaSetting));
        }
        String notKept = copy.commit(c);
        if (notKept != null) {
          return skipped(a, notKept);
        }
        return new One(
            new Artifact(a.path(), c.size(), c.sha256(), a.mediaType(), a.change(), null),
            c.dataBytes());
      }
    } finally {
      for (int i = opened.size() - 1; i >= 0; i--) {
        opened.get(i).close();
      }
    }
  }

  private static One skipped(Artifact a, String why) {
    return new One(
        new Artifact(a.path(), a.sizeBytes(), a.sha256(), a.mediaType(), a.change(), why), 0);
  }

  /** The setting naming what is left of a tenant's storage as the quota. */
  public static final String TENANT_STORAGE = "tenant_storage_max_mb";

  static String overQuota(long quotaBytes, String setting) {
    if (setting.equals(TENANT_STORAGE)) {
      return "not kept: the tenant's runs would keep more than it may (delete or purge runs to"
          + " free room; "
          + String.format(java.util.Locale.ROOT, "%.1f", quotaBytes / (double) Limits.MIB)
          + " MiB was left) ("
          + setting
          + ")";
    }
    return "not kept: the run's kept files would pass the "
        + (setting.equals("disk_quota_mb") ? "disk quota" : "bytes kept per run")
        + " of "
        + quotaBytes / Limits.MIB
        + " MiB ("
        + setting
        + ")";
  }

  static byte[] bytes(String name) {
    return name.getBytes(StandardCharsets.UTF_8);
  }
}
