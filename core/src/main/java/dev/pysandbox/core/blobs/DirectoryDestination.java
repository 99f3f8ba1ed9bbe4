package dev.pysandbox.core.blobs;

import dev.pysandbox.core.files.Descriptor;
import dev.pysandbox.core.files.FileContents;
import dev.pysandbox.core.files.TreeDeletion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Copies kept at the same paths under one plain directory (a workspace kept as it was, {@code
 * keep_workspaces}): each directory on the way made and opened relative to its parent, never
 * through a link; the directory is removed again when nothing was kept.
 */
final class DirectoryDestination implements RunFiles.Destination {
  private final Path target;
  private Descriptor root;

  DirectoryDestination(Path target) {
    this.target = target;
  }

  @Override
  public void open() throws IOException {
    Files.createDirectories(target);
    root = Descriptor.openDirectory(target);
  }

  @Override
  public RunFiles.Copy create(String[] parts, int mode) throws IOException {
    List<Descriptor> opened = new ArrayList<>();
    try {
      Descriptor dst = root;
      for (int i = 0; i < parts.length - 1; i++) {
        byte[] part = RunFiles.bytes(parts[i]);
        dst.makeDirectory(part, 0755);
        dst = dst.openDirectory(part);
        opened.add(dst);
      }
      byte[] name = RunFiles.bytes(parts[parts.length - 1]);
      Descriptor file = dst.createFile(name, mode);
      Copy copy = new Copy(dst, name, file, opened);
      opened = null;
      return copy;
    } finally {
      if (opened != null) {
        opened.forEach(Descriptor::close);
      }
    }
  }

  /** A copy in its directory ({@code dir}, open until it is closed). */
  private record Copy(Descriptor dir, byte[] name, Descriptor file, List<Descriptor> opened)
      implements RunFiles.Copy {
    @Override
    public String commit(FileContents.Copied copied) throws IOException {
      try {
        dir.sync();
      } catch (IOException e) {
        abandon();
        throw e;
      }
      return null;
    }

    @Override
    public void abandon() {
      try {
        dir.unlink(name, false);
      } catch (IOException gone) {
        // never created, or already removed
      }
    }

    @Override
    public void close() {
      file.close();
      for (int i = opened.size() - 1; i >= 0; i--) {
        opened.get(i).close();
      }
    }
  }

  @Override
  public Path where() {
    return target;
  }

  @Override
  public void finish(boolean kept) {
    if (!kept && root != null) {
      root.close();
      root = null;
      TreeDeletion.deleteTree(target);
    }
  }

  @Override
  public void close() {
    if (root != null) {
      root.close();
      root = null;
    }
  }
}
