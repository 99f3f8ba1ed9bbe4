package dev.pysandbox.core.workspace;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.core.files.CollectBudget;
import dev.pysandbox.core.files.UploadFolder;
import dev.pysandbox.core.files.WorkspaceFileWriter;
import dev.pysandbox.core.files.WorkspaceFiles;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.core.sessions.SessionManager;
import dev.pysandbox.core.sessions.SessionSteps;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.util.Ascii;
import dev.pysandbox.util.DurableFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

/**
 * Puts a file into a session's workspace: the content decoded (text, or strict base64 whose size is
 * checked before decoding) or streamed through a bounded buffer, the session's disk quota checked,
 * the file written whole or not at all as the sandbox's host user ({@link WorkspaceFileWriter}),
 * and the session's file snapshot brought up to date.
 */
public final class Uploads {
  private final long uploadMaxBytes;
  private final SessionManager sessions;
  private final Runnable requireBackend;
  private final SessionSteps steps;
  private final Path imagesDir;

  /**
   * @param requireBackend throws {@code backend_unavailable} when no sandbox can be started
   * @param steps records each file put as a step of its session
   * @param imagesDir where workspaces that are file systems of their own keep their images
   */
  /** The hashing of the workspace after an upload is bounded as a run's collection is. */
  private final java.util.function.Supplier<CollectBudget> budgets;

  public Uploads(
      long uploadMaxBytes,
      SessionManager sessions,
      Runnable requireBackend,
      SessionSteps steps,
      Path imagesDir,
      java.util.function.Supplier<CollectBudget> budgets) {
    this.budgets = budgets;
    this.steps = steps;
    this.uploadMaxBytes = uploadMaxBytes;
    this.sessions = sessions;
    this.requireBackend = requireBackend;
    this.imagesDir = imagesDir;
  }

  public UploadResult upload(String tenant, UploadRequest req) {
    String filename = req.filename();
    byte[] data = decode(req);
    requireBackend.run();
    Session s = sessions.open(new SessionKey(tenant, req.sessionId()), null);
    return sessions.with(
        s,
        sandbox -> {
          long quota = sandbox.limits().diskBytes();
          if (s.workspaceBytes() + data.length > quota
              || data.length > roomInOwnFileSystem(sandbox)) {
            throw overQuota(s.id, Long.toString(data.length), quota, s.workspaceBytes());
          }
          return write(
              s, sandbox, filename, data.length, DurableFiles.bytes(data), req.overwrite(), null);
        });
  }

  /**
   * Streams a file into a session's workspace through a bounded buffer: at most {@code
   * min(maxBytes, upload_max_bytes)} bytes are read, and no more than the session's disk quota
   * leaves room for; past either the partial file is removed.
   */
  public UploadResult uploadStream(
      String tenant,
      String sessionId,
      String filename,
      InputStream content,
      long maxBytes,
      boolean overwrite) {
    return uploadStream(tenant, sessionId, filename, content, maxBytes, overwrite, null);
  }

  /**
   * {@link #uploadStream(String, String, String, InputStream, long, boolean)}, recorded as a
   * download from {@code url} when it is not null.
   */
  UploadResult uploadStream(
      String tenant,
      String sessionId,
      String filename,
      InputStream content,
      long maxBytes,
      boolean overwrite,
      String url) {
    Ids.requireSessionId(sessionId);
    UploadRequest.requireFilename(filename);
    if (maxBytes < 0) {
      throw PysandboxException.invalid("maxBytes must be 0 or more, got " + maxBytes);
    }
    long limit = Math.min(maxBytes, uploadMaxBytes);
    requireBackend.run();
    Session s = sessions.open(new SessionKey(tenant, sessionId), null);
    return sessions.with(
        s,
        sandbox -> {
          long quota = sandbox.limits().diskBytes();
          long used = s.workspaceBytes();
          long room = Math.min(Math.max(0, quota - used), roomInOwnFileSystem(sandbox));
          DurableFiles.Content copied =
              file -> {
                DurableFiles.Written w = copy(content, file, limit, room);
                if (w == null) {
                  throw overQuota(s.id, "over " + room, quota, used);
                }
                return w;
              };
          return write(s, sandbox, filename, -1, copied, overwrite, url);
        });
  }

  /**
   * Writes {@code filename} (through its {@link UploadFolder}) into the session's workspace, then
   * takes the workspace's new snapshot and records the step ({@code url}: downloaded from, or
   * null).
   *
   * @param wantedBytes the size when known beforehand, or -1
   */
  private UploadResult write(
      Session s,
      Sandbox sandbox,
      String filename,
      long wantedBytes,
      DurableFiles.Content content,
      boolean overwrite,
      String url) {
    WorkspaceFileWriter.Target t = target(s, sandbox);
    UploadResult r;
    try (UploadFolder in = UploadFolder.open(s.id, t.workspace(), filename, t.owner())) {
      r = WorkspaceFileWriter.write(t.in(in.dir()), in.name(), wantedBytes, content, overwrite);
    } catch (IOException e) {
      throw cannotWrite(s.id, filename, e);
    }
    r = withPath(r, filename);
    s.files(WorkspaceFiles.snapshot(sandbox.workspace(), s.files(), true, budgets.get()));
    steps.file(s, r.path(), r.sizeBytes(), r.sha256(), url);
    return r;
  }

  /** The session's workspace as a write needs it. */
  private WorkspaceFileWriter.Target target(Session s, Sandbox sandbox) {
    long quota = sandbox.limits().diskBytes();
    return new WorkspaceFileWriter.Target(
        s.id,
        sandbox.workspace(),
        HostUser.currentUid() == 0 ? sandbox.hostUser() : null,
        sandbox.diskQuotaEnforced() ? imagesDir : null,
        bytes ->
            overQuota(
                s.id, bytes >= 0 ? Long.toString(bytes) : "unknown", quota, s.workspaceBytes()));
  }

  /**
   * Copies {@code in} to {@code out}, 64 KiB at a time, hashing what it writes.
   *
   * @return what was written, or {@code null} when there was more than {@code room}
   * @throws PysandboxException {@code payload_too_large} past {@code limit}, {@code
   *     invalid_argument} when {@code in} fails (the client stopped sending)
   */
  private static DurableFiles.Written copy(
      InputStream in, WritableByteChannel file, long limit, long room) throws IOException {
    DurableFiles.HashingChannel out = new DurableFiles.HashingChannel(file);
    byte[] buf = new byte[64 * 1024];
    long total = 0;
    while (true) {
      int n;
      try {
        n = in.read(buf);
      } catch (IOException e) {
        throw PysandboxException.invalid(
            "the upload ended before its end after " + total + " bytes: " + e.getMessage());
      }
      if (n < 0) {
        return out.written();
      }
      total += n;
      if (total > limit) {
        throw new PysandboxException(
            ErrorCode.PAYLOAD_TOO_LARGE,
            "the file is over " + limit + " bytes, the limit (upload_max_bytes); nothing was kept");
      }
      if (total > room) {
        return null;
      }
      ByteBuffer chunk = ByteBuffer.wrap(buf, 0, n);
      while (chunk.hasRemaining()) {
        out.write(chunk);
      }
    }
  }

  /** The result of a write into a folder of the path, with the whole path. */
  private static UploadResult withPath(UploadResult r, String path) {
    return r.path().equals(path)
        ? r
        : new UploadResult(
            r.sessionId(), path, r.sizeBytes(), r.sha256(), r.mediaType(), r.replaced());
  }

  private static PysandboxException cannotWrite(String sessionId, String path, IOException e) {
    return new PysandboxException(
        ErrorCode.INTERNAL,
        "could not open the folders of " + path + " in session '" + sessionId + "': " + e,
        e);
  }

  private static PysandboxException overQuota(
      String sessionId, String size, long quota, long used) {
    return new PysandboxException(
        ErrorCode.ARTIFACT_TOO_LARGE,
        "the file ("
            + size
            + " bytes) would take session '"
            + sessionId
            + "' past its disk quota of "
            + quota / Limits.MIB
            + " MiB ("
            + used
            + " bytes used); delete files first or ask create_session for a larger"
            + " disk_quota_mb");
  }

  /**
   * What a workspace that is a file system of its own can still take (its metadata takes some of
   * the quota, so the files' sizes alone do not tell); unbounded for a plain directory.
   */
  private static long roomInOwnFileSystem(Sandbox sandbox) {
    if (!sandbox.diskQuotaEnforced()) {
      return Long.MAX_VALUE;
    }
    try {
      // Less a block for the file's own metadata.
      return Math.max(0, Files.getFileStore(sandbox.workspace()).getUsableSpace() - 4096);
    } catch (IOException e) {
      return Long.MAX_VALUE;
    }
  }

  private byte[] decode(UploadRequest req) {
    long max = uploadMaxBytes;
    if (req.content() != null) {
      byte[] bytes = req.content().getBytes(StandardCharsets.UTF_8);
      if (bytes.length > max) {
        throw tooLarge(bytes.length, max);
      }
      return bytes;
    }
    String b64 = req.contentBase64();
    long decodedAtLeast = (long) b64.replaceAll("[\\s=]", "").length() * 3 / 4;
    if (decodedAtLeast > max) {
      throw tooLarge(decodedAtLeast, max);
    }
    try {
      return Base64.getMimeDecoder().decode(strictBase64(b64));
    } catch (IllegalArgumentException e) {
      throw PysandboxException.invalid("content_base64 is not valid base64: " + e.getMessage());
    }
  }

  /** The MIME decoder skips junk silently; refuse anything but base64 and whitespace first. */
  private static String strictBase64(String b64) {
    for (int i = 0; i < b64.length(); i++) {
      char c = b64.charAt(i);
      boolean ok =
          Ascii.isLetterOrDigit(c) || c == '+' || c == '/' || c == '=' || Character.isWhitespace(c);
      if (!ok) {
        throw new IllegalArgumentException("character '" + c + "' at index " + i);
      }
    }
    return b64;
  }

  private static PysandboxException tooLarge(long size, long max) {
    return PysandboxException.invalid(
        "the file is "
            + size
            + " bytes; upload_max_bytes is "
            + max
            + " (checked before decoding)");
  }
}
