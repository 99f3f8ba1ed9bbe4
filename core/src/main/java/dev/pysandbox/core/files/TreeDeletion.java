package dev.pysandbox.core.files;

import dev.pysandbox.backend.HostUser;
import dev.pysandbox.util.RandomIds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Removes a tree that sandboxed code made (a workspace, a run's kept files) without trusting
 * anything in it: by descriptor, never following a link, however deep or long its paths, and
 * whatever modes the code left on its directories.
 */
public final class TreeDeletion {
  private TreeDeletion() {}

  /**
   * Deletes a tree by descriptor, however deep or long its paths: directories deeper than {@link
   * TreeWalk#LIST_DEPTH} are first moved up to the root under a new name, so that no walk holds
   * more than that many directories open; a directory the code made unreadable is given back to the
   * server first (when it is not root).
   */
  public static void deleteTree(Path root) {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try {
      for (int pass = 0; pass < 100_000; pass++) {
        if (!deletePass(root)) {
          break;
        }
      }
      Files.deleteIfExists(root);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + root, e);
    }
  }

  /**
   * One walk that removes what it can; true when there is more to do (deep directories were moved
   * up, or the walk gave up on a huge tree).
   */
  private static boolean deletePass(Path root) throws IOException {
    Descriptor opened = openForDeletion(root);
    if (opened == null) {
      return false;
    }
    Descriptor top = opened;
    boolean[] lifted = {false};
    boolean owner = HostUser.currentUid() != 0;
    TreeWalk.Outcome outcome;
    try (top) {
      outcome =
          TreeWalk.walk(
              top,
              new TreeWalk.PathlessVisitor() {
                @Override
                public boolean entry(Descriptor dir, byte[] name, String path, Stat st, int depth)
                    throws IOException {
                  if (!st.isDirectory()) {
                    quietly(() -> dir.unlink(name, false));
                    return false;
                  }
                  if (owner && (st.mode() & 0700) != 0700) {
                    quietly(() -> dir.chmodDirectory(name, 0700));
                  }
                  if (depth >= TreeWalk.LIST_DEPTH) {
                    lifted[0] |= liftToRoot(dir, name, top);
                    return false;
                  }
                  return true;
                }

                @Override
                public void left(Descriptor dir, byte[] name, int depth) {
                  quietly(() -> dir.unlink(name, true));
                }
              });
    }
    return lifted[0] || outcome == TreeWalk.Outcome.TOO_LARGE;
  }

  /** The root, made accessible again if the code locked it; {@code null} when it is gone. */
  private static Descriptor openForDeletion(Path root) throws IOException {
    try {
      return Descriptor.openDirectory(root);
    } catch (Descriptor.ErrnoException e) {
      if (e.errno() == NativeFs.enoent()) {
        return null;
      }
      if (e.errno() != NativeFs.eacces()) {
        throw e;
      }
    }
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx------"));
    return Descriptor.openDirectory(root);
  }

  private static boolean liftToRoot(Descriptor dir, byte[] name, Descriptor top) {
    for (int attempt = 0; attempt < 5; attempt++) {
      byte[] fresh = (".pysandbox-deep-" + RandomIds.hex(8)).getBytes(StandardCharsets.UTF_8);
      try {
        dir.rename(name, top, fresh);
        return true;
      } catch (IOException e) {
        // a name taken: try another; anything else: leave it
      }
    }
    return false;
  }

  private interface Step {
    void run() throws IOException;
  }

  private static void quietly(Step step) {
    try {
      step.run();
    } catch (IOException e) {
      // gone already, or not removable: rmdir of its parent will say so at the end
    }
  }
}
