package dev.pysandbox.core;

import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import dev.pysandbox.api.Limits;
import dev.pysandbox.util.DiskFullException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps the files a run created or changed, under {@code <data_dir>/runs/<run id>/files/}: regular
 * files only (opened without following a link and without blocking, checked on the descriptor),
 * without setuid, setgid or group/other write bits, sparse files kept sparse, at most the disk
 * quota of data per run, each recorded with the hash of the copy actually kept, once the copy is
 * synced to the disk whole. What is not kept is still listed, with the reason in {@link
 * Artifact#skipped()} (a full disk says which).
 */
final class RunFiles {
  /**
   * The artifacts as kept.
   *
   * @param artifacts every change, in the order given; kept ones carry the copy's size and hash
   * @param kept whether anything was copied (so the run has a files directory)
   */
  record Kept(List<Artifact> artifacts, boolean kept) {}

  private RunFiles() {}

  /**
   * Copies each created or modified file of {@code changes} from {@code workspace} to the same path
   * under {@code target}, which is created if anything is kept.
   *
   * @param quotaBytes most bytes of data kept for the run (the sandbox's disk quota)
   */
  static Kept keep(Path workspace, List<Artifact> changes, Path target, long quotaBytes) {
    return keep(workspace, changes, target, quotaBytes, "disk_quota_mb", CollectBudget.unlimited());
  }

  /**
   * As {@link #keep(Path, List, Path, long)}, the copies' hashing charged to {@code spend}: a file
   * past it is not kept (a copy cut short is removed) and says why.
   */
  static Kept keep(
      Path workspace, List<Artifact> changes, Path target, long quotaBytes, CollectBudget spend) {
    return keep(workspace, changes, target, quotaBytes, "disk_quota_mb", spend);
  }

  /**
   * As {@link #keep(Path, List, Path, long, CollectBudget)}, with the quota named by the setting
   * that sets it ({@code disk_quota_mb} or {@code kept_files_max_mb}) in what a file not kept says.
   */
  static Kept keep(
      Path workspace,
      List<Artifact> changes,
      Path target,
      long quotaBytes,
      String quotaSetting,
      CollectBudget spend) {
    List<Artifact> out = new ArrayList<>(changes.size());
    long left = quotaBytes;
    boolean kept = false;
    Descriptor from = null;
    Descriptor to = null;
    try {
      for (Artifact a : changes) {
        if (a.change() == ArtifactChange.DELETED || a.skipped() != null) {
          out.add(a);
          continue;
        }
        if (from == null) {
          from = Descriptor.openDirectory(workspace);
          Files.createDirectories(target);
          to = Descriptor.openDirectory(target);
        }
        One done;
        try {
          done = keepOne(from, a, to, left, quotaBytes, quotaSetting, spend);
        } catch (IOException e) {
          // This file only (a read error, a full disk for the copy): the others are still kept.
          DiskFullException full = DiskFullException.of(e, target, a.sizeBytes());
          done =
              skipped(
                  a,
                  full != null
                      ? "not kept: the data directory's disk is full ("
                          + DiskFullException.describe(target)
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
      throw new UncheckedIOException("cannot keep the files in " + target, e);
    } finally {
      if (from != null) {
        from.close();
      }
      if (to != null) {
        to.close();
      }
    }
    if (!kept && to != null) {
      TreeDeletion.deleteTree(target);
      try {
        Files.deleteIfExists(target.getParent());
      } catch (IOException e) {
        // holds something else: left alone
      }
    }
    return new Kept(out, kept);
  }

  /** One file as kept (or not), and the bytes of data its copy took. */
  private record One(Artifact artifact, long dataBytes) {}

  private static One keepOne(
      Descriptor from,
      Artifact a,
      Descriptor to,
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
      Descriptor dst = to;
      for (int i = 0; i < parts.length - 1; i++) {
        byte[] part = bytes(parts[i]);
        dst.makeDirectory(part, 0755);
        dst = dst.openDirectory(part);
        opened.add(dst);
      }
      FileContents.Copied c;
      String spent = null;
      try (Descriptor copy = dst.createFile(name, (st.permissions() & 0755) | 0600)) {
        try {
          c = FileContents.copy(src, st.size(), copy, left, spend);
        } catch (CollectBudget.Spent e) {
          // Removed after the try closes the copy: nothing of a file cut short is kept.
          spend.skipped(e.getMessage());
          spent = e.getMessage();
          c = null;
        }
        if (c != null && !c.overBudget()) {
          // Recorded with its hash only once it is on the disk, whole.
          copy.sync();
          long size = copy.stat().size();
          if (size != c.size()) {
            throw new IOException("the copy holds " + size + " bytes, not " + c.size());
          }
          dst.sync();
        }
      } catch (IOException e) {
        try {
          dst.unlink(name, false);
        } catch (IOException gone) {
          // never created
        }
        throw e;
      }
      if (spent != null) {
        dst.unlink(name, false);
        return skipped(a, spent);
      }
      if (c.overBudget()) {
        dst.unlink(name, false);
        return skipped(a, overQuota(quotaBytes, quotaSetting));
      }
      return new One(
          new Artifact(a.path(), c.size(), c.sha256(), a.mediaType(), a.change(), null),
          c.dataBytes());
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
  static final String TENANT_STORAGE = "tenant_storage_max_mb";

  private static String overQuota(long quotaBytes, String setting) {
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

  private static byte[] bytes(String name) {
    return name.getBytes(StandardCharsets.UTF_8);
  }
}
