package dev.pysandbox.core.blobs;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.files.Descriptor;
import dev.pysandbox.core.files.FileContents;
import dev.pysandbox.core.files.NativeFs;
import dev.pysandbox.core.files.Stat;
import dev.pysandbox.core.files.WorkspaceAccess;
import dev.pysandbox.store.BlobIndex;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.RandomIds;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The content-addressed store of the files runs keep (issue 24 item 9: a 200 MiB file unchanged
 * across 50 runs was stored, and counted, 50 times): each distinct content once, as {@code
 * data_dir/blobs/<first 2 hex>/<sha256>}, which runs keep it at which path in the store ({@link
 * BlobIndex}). A copy is written as a new temporary file in {@code blobs/tmp/} (O_EXCL |
 * O_NOFOLLOW, synced), its row recorded, then renamed into place (never over an entry: one already
 * there is kept when it is a plain file of the right size with one link, else removed first, never
 * followed). Everything is opened relative to {@code blobs/} by descriptor, so a link planted
 * anywhere under it is refused, not followed.
 */
public final class KeptBlobs {
  private static final Logger log = LoggerFactory.getLogger(KeptBlobs.class);
  static final String DIR = "blobs";
  private static final byte[] TMP = RunFiles.bytes("tmp");
  private static final long PID = ProcessHandle.current().pid();

  private final DataLayout layout;
  private final Supplier<RunStore> store;

  public KeptBlobs(DataLayout layout, Supplier<RunStore> store) {
    this.layout = layout;
    this.store = store;
  }

  public Path dir() {
    return layout.dataDir().resolve(DIR);
  }

  public BlobIndex index() {
    return store.get().blobs();
  }

  /** The name of a blob's directory: the first two hex digits of its digest. */
  private static byte[] shard(String sha256) {
    if (!sha256.matches("[0-9a-f]{64}")) {
      throw new IllegalArgumentException("not a sha256: " + sha256);
    }
    return RunFiles.bytes(sha256.substring(0, 2));
  }

  /** {@code blobs/}, made (0700) when {@code make}; never through a link. */
  Descriptor openRoot(boolean make) throws IOException {
    try (Descriptor data = Descriptor.openDirectory(layout.dataDir())) {
      byte[] name = RunFiles.bytes(DIR);
      if (make) {
        data.makeDirectory(name, 0700);
      }
      return data.openDirectory(name);
    }
  }

  /**
   * A directory of {@code blobs/}; when {@code make}, made if missing, and a link or a file found
   * in its place removed (never followed) and replaced by a directory.
   */
  static Descriptor subdir(Descriptor root, byte[] name, boolean make) throws IOException {
    if (make) {
      root.makeDirectory(name, 0700);
    }
    try {
      return root.openDirectory(name);
    } catch (Descriptor.ErrnoException e) {
      if (!make || (e.errno() != NativeFs.eloop() && e.errno() != NativeFs.enotdir())) {
        throw e;
      }
      root.unlink(name, false);
      root.makeDirectory(name, 0700);
      return root.openDirectory(name);
    }
  }

  /**
   * Keeps a run's files here; a file whose content {@code tenant}'s runs already keep costs it
   * nothing against {@code tenantLeft} (its storage: each blob once).
   */
  public RunFiles.Destination forRun(String tenant, String runId, long tenantLeft) {
    return new RunDestination(tenant, runId, tenantLeft);
  }

  private final class RunDestination implements RunFiles.Destination {
    private final String tenant;
    private final String runId;
    private long tenantLeft;
    private final Set<String> kept = new HashSet<>();
    private Descriptor root;
    private Descriptor tmp;

    RunDestination(String tenant, String runId, long tenantLeft) {
      this.tenant = tenant;
      this.runId = runId;
      this.tenantLeft = tenantLeft;
    }

    @Override
    public void open() throws IOException {
      root = openRoot(true);
      tmp = subdir(root, TMP, true);
    }

    @Override
    public RunFiles.Copy create(String[] parts, int mode) throws IOException {
      byte[] name = RunFiles.bytes(".blob." + PID + "." + RandomIds.hex(8) + ".tmp");
      return new BlobCopy(String.join("/", parts), name, tmp.createFile(name, 0600));
    }

    /** One copy, in {@code blobs/tmp/} until it is committed. */
    private final class BlobCopy implements RunFiles.Copy {
      private final String path;
      private final byte[] name;
      private final Descriptor file;

      BlobCopy(String path, byte[] name, Descriptor file) {
        this.path = path;
        this.name = name;
        this.file = file;
      }

      @Override
      public Descriptor file() {
        return file;
      }

      @Override
      public String commit(FileContents.Copied c) throws IOException {
        try {
          // What the tenant already keeps costs it nothing; whether another tenant keeps the same
          // content is never asked, so nothing here depends on it.
          long cost =
              kept.contains(c.sha256()) || index().tenantHolds(tenant, c.sha256()) ? 0 : c.size();
          if (cost > tenantLeft) {
            abandon();
            return RunFiles.overQuota(tenantLeft, RunFiles.TENANT_STORAGE);
          }
          // The row first: from now on no purge deletes this blob, and if one deleted it just
          // before, its file is gone and this copy takes its place.
          index().reference(tenant, runId, path, c.sha256(), c.size());
          place(root, tmp, name, c.sha256(), c.size());
          tenantLeft -= cost;
          kept.add(c.sha256());
          return null;
        } catch (IOException | RuntimeException e) {
          abandon();
          throw e;
        }
      }

      @Override
      public void abandon() {
        try {
          tmp.unlink(name, false);
        } catch (IOException gone) {
          // placed or never created
        }
      }

      @Override
      public void close() {
        file.close();
      }
    }

    @Override
    public Path where() {
      return dir();
    }

    @Override
    public void finish(boolean anything) {
      // Nothing to undo: a run that kept nothing referenced nothing.
    }

    @Override
    public void close() {
      if (tmp != null) {
        tmp.close();
      }
      if (root != null) {
        root.close();
      }
    }
  }

  /**
   * Puts the synced file {@code name} of {@code from} in place as the blob {@code sha256}: when a
   * sound copy is there already, the new one is dropped; anything else there (a link, a file of
   * another size or with more than one link) is removed, never followed, and replaced.
   */
  static void place(Descriptor root, Descriptor from, byte[] name, String sha256, long size)
      throws IOException {
    try (Descriptor sub = subdir(root, shard(sha256), true)) {
      byte[] blob = RunFiles.bytes(sha256);
      for (int attempt = 0; ; attempt++) {
        Stat st = sub.stat(blob);
        if (st == null) {
          try {
            from.rename(name, sub, blob);
            sub.sync();
            return;
          } catch (Descriptor.ErrnoException e) {
            if (e.errno() != NativeFs.eexist() || attempt > 3) {
              throw e;
            }
            continue; // another writer placed it meanwhile
          }
        }
        if (sound(st, size)) {
          from.unlink(name, false);
          return;
        }
        log.warn("replacing {} in {}: {} was there", sha256, DIR, describe(st));
        sub.unlink(blob, st.isDirectory());
      }
    }
  }

  /** A blob as written here: a regular file of the recorded size with no other link to it. */
  static boolean sound(Stat st, long size) {
    return st.isRegular() && st.links() == 1 && st.size() == size;
  }

  private static String describe(Stat st) {
    return st.isRegular()
        ? "a file with " + st.links() + " links of " + st.size() + " bytes"
        : st.kind();
  }

  /**
   * Opens the blob {@code ref} names for reading: {@code blobs/}, its directory and the file each
   * opened without following a link, the file checked on its descriptor.
   *
   * @throws PysandboxException {@code not_found} when it is missing, {@code forbidden} when what is
   *     there is not the plain file written here
   */
  public WorkspaceAccess.Opened open(BlobIndex.BlobRef ref, String where) {
    try (Descriptor root = openRoot(false);
        Descriptor sub = root.openDirectory(shard(ref.sha256()))) {
      Descriptor file = sub.openFile(RunFiles.bytes(ref.sha256()));
      Stat st = file.stat();
      if (!sound(st, ref.sizeBytes())) {
        file.close();
        throw new PysandboxException(
            ErrorCode.FORBIDDEN,
            ref.path()
                + " in "
                + where
                + ": its stored copy is "
                + describe(st)
                + ", not the file kept (links are never followed)");
      }
      return new WorkspaceAccess.Opened(file, st);
    } catch (Descriptor.ErrnoException e) {
      if (e.errno() == NativeFs.enoent()) {
        throw new PysandboxException(
            ErrorCode.NOT_FOUND, "no file " + ref.path() + " in " + where + " (its copy is gone)");
      }
      if (e.errno() == NativeFs.eloop() || e.errno() == NativeFs.enotdir()) {
        throw new PysandboxException(
            ErrorCode.FORBIDDEN,
            ref.path() + " in " + where + ": a link where its copy belongs (never followed)");
      }
      throw internal(ref, where, e);
    } catch (IOException e) {
      throw internal(ref, where, e);
    }
  }

  private static PysandboxException internal(BlobIndex.BlobRef ref, String where, IOException e) {
    return new PysandboxException(
        ErrorCode.INTERNAL,
        "could not read " + ref.path() + " in " + where + ": " + e.getMessage(),
        e);
  }

  /**
   * Deletes a blob's file (called by the store inside the transaction that deletes its row).
   *
   * @return whether it is gone (a failure is logged, and the row stays)
   */
  public boolean deleteFile(String sha256) {
    try (Descriptor root = openRoot(false);
        Descriptor sub = root.openDirectory(shard(sha256))) {
      sub.unlink(RunFiles.bytes(sha256), false);
      return true;
    } catch (Descriptor.ErrnoException e) {
      if (e.errno() == NativeFs.enoent()) {
        return true;
      }
      log.warn("could not delete the blob {}: {}", sha256, e.getMessage());
      return false;
    } catch (IOException | IllegalArgumentException e) {
      log.warn("could not delete the blob {}: {}", sha256, e.getMessage());
      return false;
    }
  }

  /**
   * A run's kept file from the store, opened for streaming and hashing; {@code null} when the run
   * keeps no such file here (one kept the old way).
   */
  public FileStream stream(String runId, String path, String where) {
    return index()
        .file(runId, path)
        .map(f -> WorkspaceAccess.stream(open(f, where), path, where))
        .orElse(null);
  }

  /**
   * Copies a run's kept files out of the store to the same paths under {@code target} (a run
   * deleted with {@code delete_files=false} leaves its files on disk there, as before the store).
   *
   * @throws PysandboxException {@code write_failed} when they could not all be copied
   */
  public void restore(String runId, Path target) {
    List<BlobIndex.BlobRef> files = index().files(runId);
    if (files.isEmpty()) {
      return;
    }
    String where = "run " + runId;
    try (DirectoryDestination to = new DirectoryDestination(target)) {
      to.open();
      for (BlobIndex.BlobRef f : files) {
        WorkspaceAccess.Opened from = open(f, where);
        try (Descriptor src = from.file();
            RunFiles.Copy copy = to.create(f.path().split("/"), 0644)) {
          FileContents.copy(src, from.stat().size(), copy.file(), Long.MAX_VALUE);
          copy.file().sync();
          copy.commit(null);
        }
      }
    } catch (IOException e) {
      throw PysandboxException.writeFailed(
          "could not copy the files of " + where + " to " + target, e);
    }
  }

  /**
   * Drops {@code runId}'s references and deletes the blobs no run references any more.
   *
   * @return what {@code tenant}'s storage shrank by (its own figure: another tenant that keeps the
   *     same content changes nothing in it)
   */
  public long release(String tenant, String runId) {
    return index().release(tenant, runId, this::deleteFile);
  }
}
