package dev.pysandbox.core;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.store.SessionKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Base64;

/**
 * Puts a file into a session's workspace: the content decoded (text, or strict base64 whose size is
 * checked before decoding), the session's disk quota checked, the file written as the sandbox's
 * host user, and the session's file snapshot brought up to date.
 */
final class Uploads {
  private final long uploadMaxBytes;
  private final SessionManager sessions;
  private final Runnable requireBackend;

  /**
   * @param requireBackend throws {@code backend_unavailable} when no sandbox can be started
   */
  Uploads(long uploadMaxBytes, SessionManager sessions, Runnable requireBackend) {
    this.uploadMaxBytes = uploadMaxBytes;
    this.sessions = sessions;
    this.requireBackend = requireBackend;
  }

  UploadResult upload(String tenant, UploadRequest req) {
    String filename = req.filename();
    byte[] data = decode(req);
    requireBackend.run();
    Session s = sessions.open(new SessionKey(tenant, req.sessionId()), null);
    boolean root = HostUser.currentUid() == 0;
    return sessions.with(
        s,
        sandbox -> {
          HostUser owner = root ? sandbox.hostUser() : null;
          long quota = sandbox.limits().diskBytes();
          if (s.workspaceBytes() + data.length > quota
              || data.length > roomInOwnFileSystem(sandbox)) {
            throw new PysandboxException(
                ErrorCode.ARTIFACT_TOO_LARGE,
                "the file ("
                    + data.length
                    + " bytes) would take session '"
                    + s.id
                    + "' past its disk quota of "
                    + quota / Limits.MIB
                    + " MiB ("
                    + s.workspaceBytes()
                    + " bytes used); delete files first or ask create_session for a larger"
                    + " disk_quota_mb");
          }
          UploadResult r =
              WorkspaceAccess.write(
                  s.id, sandbox.workspace(), filename, data, req.overwrite(), owner);
          s.files(WorkspaceFiles.snapshot(sandbox.workspace(), s.files(), true));
          return r;
        });
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
          (c >= 'A' && c <= 'Z')
              || (c >= 'a' && c <= 'z')
              || (c >= '0' && c <= '9')
              || c == '+'
              || c == '/'
              || c == '='
              || Character.isWhitespace(c);
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
