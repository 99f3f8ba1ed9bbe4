package dev.pysandbox.core.files;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.util.DiskFullException;
import dev.pysandbox.util.DurableFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.function.LongFunction;

/**
 * Writes one file at the top of a workspace the code can change meanwhile ({@link DurableFiles}:
 * relative to the directory held open, a new temporary name, synced, renamed over the name, so a
 * link the code planted is replaced, never written through), owned by the sandbox's user, and says
 * which disk was full when one was.
 *
 * <p>A workspace that is a file system of its own (an ext4 image) is full when its quota is used
 * up: that is {@code artifact_too_large}, as the quota check before writing says. Its image lives
 * sparse on the host's disk under {@code images/}: when that disk is full, writes into the image
 * succeed into memory and are lost at write-back (issue 23). The sync reports that as an I/O error,
 * and a host disk already (nearly) full is refused before anything is written: both are {@code
 * disk_full}, naming the host's file system.
 */
public final class WorkspaceFileWriter {
  /** What the host's disk must have free, beyond the file, before a file goes into an image. */
  static final long IMAGE_HOST_MARGIN_BYTES = 4L << 20;

  /**
   * One workspace, as a write needs it.
   *
   * @param owner the sandbox user, or {@code null} when the server itself is that user
   * @param imagesDir where its image lives on the host, or {@code null} when it is a plain
   *     directory
   * @param overQuota the error for a file of so many bytes the quota cannot take
   */
  public record Target(
      String sessionId,
      Path workspace,
      HostUser owner,
      Path imagesDir,
      LongFunction<PysandboxException> overQuota) {

    /** The same workspace, written in one of its folders (opened by descriptor). */
    public Target in(Path folder) {
      return new Target(sessionId, folder, owner, imagesDir, overQuota);
    }
  }

  private WorkspaceFileWriter() {}

  /**
   * Writes {@code filename} (a plain name: an upload into folders opens them first, {@link
   * UploadFolder}, and writes in the last one) whole, or not at all.
   *
   * @param wantedBytes what it will take, -1 when not known yet (a stream)
   * @throws PysandboxException {@code file_exists}, {@code invalid_argument} (a directory), {@code
   *     artifact_too_large} (the quota), {@code disk_full} (the host's disk), or what {@code
   *     content} throws
   */
  public static UploadResult write(
      Target t,
      String filename,
      long wantedBytes,
      DurableFiles.Content content,
      boolean overwrite) {
    refuseWhenHostFull(t, filename, Math.max(wantedBytes, 0));
    try (DirectoryStream<Path> top = Files.newDirectoryStream(t.workspace())) {
      if (!(top instanceof SecureDirectoryStream<Path> dir)) {
        throw new IllegalStateException("this platform has no SecureDirectoryStream");
      }
      BasicFileAttributes existing = attributes(dir, Path.of(filename));
      if (existing != null && !overwrite) {
        throw new PysandboxException(
            ErrorCode.FILE_EXISTS,
            filename
                + " already exists in session '"
                + t.sessionId()
                + "'; pass overwrite=true to replace it");
      }
      if (existing != null && existing.isDirectory()) {
        throw PysandboxException.invalid(
            filename + " is a directory in session '" + t.sessionId() + "'");
      }
      DurableFiles.Written w =
          DurableFiles.write(
              dir,
              t.workspace(),
              filename,
              wantedBytes,
              content,
              view -> {
                if (t.owner() != null) {
                  UserPrincipalLookupService users =
                      FileSystems.getDefault().getUserPrincipalLookupService();
                  view.setOwner(users.lookupPrincipalByName(t.owner().name()));
                  view.setGroup(
                      users.lookupPrincipalByGroupName(Integer.toString(t.owner().gid())));
                }
              });
      return new UploadResult(
          t.sessionId(),
          filename,
          w.size(),
          w.sha256(),
          WorkspaceFiles.mediaType(filename),
          existing != null);
    } catch (DiskFullException e) {
      if (t.imagesDir() != null) {
        // The image itself is full: its quota, whatever the quota check before writing allowed.
        throw t.overQuota().apply(e.wantedBytes());
      }
      throw diskFull(t, filename, e.getMessage(), e);
    } catch (IOException e) {
      if (t.imagesDir() != null && hostFull(t, 0)) {
        throw diskFull(t, filename, hostSays(t) + " (" + e.getMessage() + ")", e);
      }
      throw new PysandboxException(
          ErrorCode.INTERNAL,
          "could not write "
              + filename
              + " into session '"
              + t.sessionId()
              + "': "
              + e.getMessage()
              + "; nothing was kept",
          e);
    }
  }

  /** A host disk with less than the file and a margin free takes nothing into an image. */
  private static void refuseWhenHostFull(Target t, String filename, long bytes) {
    if (t.imagesDir() != null && hostFull(t, bytes)) {
      throw diskFull(t, filename, hostSays(t), null);
    }
  }

  private static boolean hostFull(Target t, long bytes) {
    long usable = DiskFullException.usable(t.imagesDir());
    return usable >= 0 && usable < bytes + IMAGE_HOST_MARGIN_BYTES;
  }

  private static String hostSays(Target t) {
    return "the host's disk that holds the workspace images is full: "
        + DiskFullException.describe(t.imagesDir())
        + ", "
        + IMAGE_HOST_MARGIN_BYTES
        + " bytes kept free beyond each file";
  }

  private static PysandboxException diskFull(
      Target t, String filename, String why, Throwable cause) {
    return new PysandboxException(
        ErrorCode.DISK_FULL,
        "could not write "
            + filename
            + " into session '"
            + t.sessionId()
            + "': "
            + why
            + "; nothing was kept; free space on that disk and try again",
        cause);
  }

  private static BasicFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name) {
    try {
      return dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
          .readAttributes();
    } catch (IOException e) {
      return null;
    }
  }
}
