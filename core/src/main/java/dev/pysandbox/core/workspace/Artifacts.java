package dev.pysandbox.core.workspace;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileInfo;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.blobs.KeptBlobs;
import dev.pysandbox.core.files.CollectBudget;
import dev.pysandbox.core.files.WorkspaceAccess;
import dev.pysandbox.core.files.WorkspaceFiles;
import dev.pysandbox.core.requests.RequestValidator;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.core.sessions.SessionManager;
import dev.pysandbox.store.BlobIndex;
import dev.pysandbox.store.SessionKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * Lists and reads files: a session's as its workspace holds them now, a run's as the run left them
 * (the copies kept in the blob store, {@link KeptBlobs}; a run kept the old way, under {@code
 * runs/<run id>/files/}, is read there until the start-up moves it).
 */
public final class Artifacts {
  private final DataLayout layout;
  private final long readMaxBytes;
  private final SessionManager sessions;
  private final BiFunction<String, String, RunRecord> runs;
  private final KeptBlobs blobs;

  /** A listing hashes what changed within the budget a run's collection has. */
  private final java.util.function.Supplier<CollectBudget> budgets;

  /**
   * @param runs finds a tenant's run by id (without its code), or throws {@code not_found}
   */
  public Artifacts(
      DataLayout layout,
      long readMaxBytes,
      SessionManager sessions,
      BiFunction<String, String, RunRecord> runs,
      java.util.function.Supplier<CollectBudget> budgets,
      KeptBlobs blobs) {
    this.blobs = blobs;
    this.budgets = budgets;
    this.layout = layout;
    this.readMaxBytes = readMaxBytes;
    this.sessions = sessions;
    this.runs = runs;
  }

  public ArtifactList list(String tenant, String runId, String sessionId) {
    RequestValidator.requireExactlyOne(runId, sessionId);
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
      Session s = sessions.require(new SessionKey(tenant, sessionId));
      Sandbox sandbox = s.sandbox.getNow(null);
      var files =
          sandbox == null
              ? Map.<String, WorkspaceFiles.FileState>of()
              : WorkspaceFiles.snapshot(sandbox.workspace(), s.files(), true, budgets.get())
                  .files();
      return new ArtifactList(sessionId, null, WorkspaceAccess.list(files), List.of());
    }
    RunRecord r = runs.apply(tenant, runId);
    List<BlobIndex.BlobRef> kept = blobs.index().files(runId);
    if (!kept.isEmpty()) {
      List<FileInfo> infos = new ArrayList<>();
      for (BlobIndex.BlobRef f : kept) {
        infos.add(
            new FileInfo(f.path(), f.sizeBytes(), f.sha256(), WorkspaceFiles.mediaType(f.path())));
      }
      return new ArtifactList(null, runId, infos, r.artifacts());
    }
    // A run kept the old way (runs/<id>/files), read where it is until the start-up moves it.
    Path dir = layout.runFiles(runId);
    var files =
        Files.isDirectory(dir)
            ? WorkspaceFiles.snapshot(dir, Map.of(), true, budgets.get()).files()
            : Map.<String, WorkspaceFiles.FileState>of();
    return new ArtifactList(null, runId, WorkspaceAccess.list(files), r.artifacts());
  }

  public ArtifactContent read(
      String tenant, String runId, String sessionId, String path, long maxSizeBytes) {
    RequestValidator.requireExactlyOne(runId, sessionId);
    RequestValidator.maxSizeBytes(maxSizeBytes);
    WorkspaceAccess.validatePath(path);
    String where = where(runId, sessionId);
    WorkspaceAccess.Opened blob = blob(tenant, runId, path, where);
    if (blob != null) {
      return WorkspaceAccess.read(blob, path, maxSizeBytes, readMaxBytes, where);
    }
    return WorkspaceAccess.read(
        root(tenant, runId, sessionId), path, maxSizeBytes, readMaxBytes, where);
  }

  /** One file opened for streaming, of any size (see {@link WorkspaceAccess#open}). */
  public FileStream open(String tenant, String runId, String sessionId, String path) {
    RequestValidator.requireExactlyOne(runId, sessionId);
    WorkspaceAccess.validatePath(path);
    String where = where(runId, sessionId);
    WorkspaceAccess.Opened blob = blob(tenant, runId, path, where);
    if (blob != null) {
      return WorkspaceAccess.stream(blob, path, where);
    }
    return WorkspaceAccess.open(root(tenant, runId, sessionId), path, where);
  }

  /**
   * A run's kept file, opened from the blob store by descriptor; {@code null} for a session's file
   * or a file the run kept the old way. Another tenant's run is {@code not_found} first.
   */
  private WorkspaceAccess.Opened blob(String tenant, String runId, String path, String where) {
    if (runId == null) {
      return null;
    }
    runs.apply(tenant, runId);
    var kept = blobs.index().file(runId, path);
    if (kept.isPresent()) {
      return blobs.open(kept.get(), where);
    }
    if (!Files.isDirectory(layout.runFiles(runId)) && !blobs.index().files(runId).isEmpty()) {
      throw new PysandboxException(ErrorCode.NOT_FOUND, "no file " + path + " in " + where);
    }
    return null;
  }

  /** The directory a session's or a run's files are read from. */
  private Path root(String tenant, String runId, String sessionId) {
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
      Session s = sessions.require(new SessionKey(tenant, sessionId));
      Sandbox sandbox = s.sandbox.getNow(null);
      if (sandbox == null) {
        throw new PysandboxException(
            ErrorCode.NOT_FOUND, "session '" + sessionId + "' has no workspace yet");
      }
      return sandbox.workspace();
    }
    runs.apply(tenant, runId);
    Path dir = layout.runFiles(runId);
    if (!Files.isDirectory(dir)) {
      throw new PysandboxException(ErrorCode.NOT_FOUND, "run " + runId + " kept no files");
    }
    return dir;
  }

  private static String where(String runId, String sessionId) {
    return sessionId != null ? "session '" + sessionId + "'" : "run " + runId;
  }
}
