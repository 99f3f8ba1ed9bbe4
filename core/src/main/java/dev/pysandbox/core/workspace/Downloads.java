package dev.pysandbox.core.workspace;

import dev.pysandbox.api.DownloadResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.network.EgressWays;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.core.sessions.SessionManager;
import dev.pysandbox.egress.EgressGate;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.util.Closeables;
import dev.pysandbox.util.DiskFullException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code download_file}: the server fetches a URL through the egress policy ({@link EgressWays})
 * into a temporary file of its own, bounded by {@code download_max_mb} and {@code
 * upload_max_bytes}, then writes it into the session's workspace the way an upload is written (by
 * descriptor, within the disk quota).
 */
public final class Downloads {
  private static final Logger log = LoggerFactory.getLogger(Downloads.class);

  private final DataLayout layout;
  private final long maxBytes;
  private final EgressWays egress;
  private final SessionManager sessions;
  private final Uploads uploads;
  private final dev.pysandbox.config.Tier defaultTier;

  public Downloads(
      DataLayout layout,
      long maxBytes,
      EgressWays egress,
      SessionManager sessions,
      Uploads uploads,
      dev.pysandbox.config.Tier defaultTier) {
    this.defaultTier = defaultTier;
    this.layout = layout;
    this.maxBytes = maxBytes;
    this.egress = egress;
    this.sessions = sessions;
    this.uploads = uploads;
  }

  public DownloadResult download(
      String tenant, String sessionId, String url, String filename, boolean overwrite) {
    Ids.requireSessionId(sessionId);
    UploadRequest.requireFilename(filename);
    URI uri = DownloadUrls.parse(url);
    SessionKey key = new SessionKey(tenant, sessionId);
    Session open = sessions.find(key);
    if (open == null) {
      // Known before fetching anything: a session that ended is not made again by a download.
      sessions.requireCreatable(key, defaultTier, java.util.List.of(), false);
    }
    if (open != null && !overwrite && open.files().containsKey(filename)) {
      // Known now, before fetching anything (the write checks again, by descriptor).
      throw new PysandboxException(
          ErrorCode.FILE_EXISTS,
          filename
              + " already exists in session '"
              + sessionId
              + "'; pass overwrite=true to replace it");
    }
    Path temp = null;
    try {
      Files.createDirectories(layout.runtimeDir());
      temp = Files.createTempFile(layout.runtimeDir(), "download-", ".part");
      EgressGate.Download d;
      try (OutputStream out = Files.newOutputStream(temp)) {
        d = egress.download(uri, maxBytes, out, tenant, sessionId);
      }
      UploadResult written;
      try (InputStream in = Files.newInputStream(temp)) {
        written =
            uploads.uploadStream(
                tenant, sessionId, filename, in, maxBytes, overwrite, uri.toString());
      }
      return new DownloadResult(
          written.sessionId(),
          written.path(),
          uri.toString(),
          d.finalUrl().toString(),
          written.sizeBytes(),
          written.sha256(),
          d.contentType(),
          d.status());
    } catch (EgressGate.DownloadFailed e) {
      if (e.tooLarge()) {
        throw new PysandboxException(
            ErrorCode.ARTIFACT_TOO_LARGE,
            "could not download "
                + PysandboxException.quote(url)
                + ": "
                + e.getMessage()
                + " (download_max_mb and upload_max_bytes bound it)");
      }
      // The origin's answer: a 4xx will be the same again, a server error may not.
      throw new PysandboxException(
          ErrorCode.INVALID_ARGUMENT,
          "could not download " + PysandboxException.quote(url) + ": " + e.getMessage(),
          e.status() >= 500);
    } catch (IOException e) {
      DiskFullException full =
          DiskFullException.of(e, temp == null ? layout.runtimeDir() : temp, -1);
      if (full != null) {
        throw new PysandboxException(
            ErrorCode.DISK_FULL,
            "could not download "
                + PysandboxException.quote(url)
                + " into session '"
                + sessionId
                + "': the server's own copy did not fit: "
                + full.getMessage()
                + "; nothing was kept",
            e);
      }
      // A broken or timed-out transfer: trying again may work.
      String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
      throw new PysandboxException(
          ErrorCode.INVALID_ARGUMENT,
          "could not download " + PysandboxException.quote(url) + ": " + why,
          true);
    } finally {
      if (temp != null) {
        Path t = temp;
        Closeables.quietly(() -> Files.deleteIfExists(t), log);
      }
    }
  }
}
