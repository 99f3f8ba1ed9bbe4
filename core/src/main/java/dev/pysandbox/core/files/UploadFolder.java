package dev.pysandbox.core.files;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.HostUser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.List;

/**
 * Where an upload whose path names folders ({@code data/in.csv}) is written: each folder below the
 * workspace opened relative to its parent with {@code O_NOFOLLOW} (made first when it is missing,
 * owned by the sandbox user), so that a link the code planted in the path is refused, never
 * followed. The last folder's descriptor is handed to the write as {@code /proc/self/fd/N}, which
 * names that very folder whatever is renamed meanwhile; the write then refuses links in it as it
 * does at the top. A path without folders is written at the top, as it always was.
 */
public final class UploadFolder implements AutoCloseable {
  private final Descriptor folder;
  private final Path dir;
  private final String name;

  private UploadFolder(Descriptor folder, Path dir, String name) {
    this.folder = folder;
    this.dir = dir;
    this.name = name;
  }

  /**
   * @param path a relative path of plain names, as {@link
   *     dev.pysandbox.api.UploadRequest#requireFilename} checked it
   * @param owner the sandbox user, who owns the folders made; {@code null} when the server is that
   *     user
   * @throws PysandboxException {@code invalid_argument} when a folder of the path is a file or a
   *     link
   */
  public static UploadFolder open(String sessionId, Path workspace, String path, HostUser owner)
      throws IOException {
    List<String> parts = WorkspaceAccess.validatePath(path);
    String name = parts.get(parts.size() - 1);
    if (parts.size() == 1) {
      return new UploadFolder(null, workspace, name);
    }
    Descriptor at = Descriptor.openDirectory(workspace);
    try {
      for (String part : parts.subList(0, parts.size() - 1)) {
        byte[] b = part.getBytes(StandardCharsets.UTF_8);
        boolean made = at.stat(b) == null;
        if (made) {
          at.makeDirectory(b, 0755);
        }
        Descriptor next;
        try {
          next = at.openDirectory(b);
        } catch (Descriptor.ErrnoException e) {
          throw PysandboxException.invalid(
              "cannot upload "
                  + path
                  + " into session '"
                  + sessionId
                  + "': '"
                  + part
                  + "' is not a folder of its workspace (a file, or a link, which is never"
                  + " followed)");
        }
        at.close();
        at = next;
        if (made && owner != null) {
          chown(procPath(at), owner);
        }
      }
      return new UploadFolder(at, procPath(at), name);
    } catch (IOException | RuntimeException e) {
      at.close();
      throw e;
    }
  }

  private static Path procPath(Descriptor d) {
    return Path.of("/proc/self/fd/" + d.number());
  }

  private static void chown(Path dir, HostUser owner) throws IOException {
    PosixFileAttributeView view = Files.getFileAttributeView(dir, PosixFileAttributeView.class);
    UserPrincipalLookupService users = FileSystems.getDefault().getUserPrincipalLookupService();
    view.setOwner(users.lookupPrincipalByName(owner.name()));
    view.setGroup(users.lookupPrincipalByGroupName(Integer.toString(owner.gid())));
  }

  /** The folder to write in, as the write opens it. */
  public Path dir() {
    return dir;
  }

  /** The file's name in {@link #dir()}. */
  public String name() {
    return name;
  }

  @Override
  public void close() {
    if (folder != null) {
      folder.close();
    }
  }
}
