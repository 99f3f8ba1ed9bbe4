package dev.pysandbox;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small ext4 file system of the test's own, in an image file loop-mounted under a temporary
 * directory, as the workspaces are: for tests that need a real disk whatever {@code /tmp} is (a
 * tmpfs on Debian 13 and fresh CI images: directories take no blocks there) or a disk they can
 * fill. Needs root, as the test command runs (it is never skipped: a host that cannot mount fails).
 */
public final class LoopFileSystem implements AutoCloseable {
  private final Path image;
  private final Path root;
  private boolean mounted;

  private LoopFileSystem(Path image, Path root) {
    this.image = image;
    this.root = root;
  }

  /** A new ext4 of {@code bytes} (4 KiB blocks, none reserved), mounted at {@code dir/mnt}. */
  public static LoopFileSystem ext4(Path dir, long bytes) throws IOException, InterruptedException {
    Path image = dir.resolve("fs.img");
    Path root = Files.createDirectories(dir.resolve("mnt"));
    try (FileChannel ch =
        FileChannel.open(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ch.truncate(bytes);
      ch.write(ByteBuffer.allocate(1), bytes - 1);
    }
    LoopFileSystem fs = new LoopFileSystem(image, root);
    // 4 KiB blocks whatever the size (as the workspaces have): a directory takes one.
    run("mkfs.ext4", "-q", "-F", "-b", "4096", "-m", "0", "-E", "nodiscard", image.toString());
    run("mount", "-o", "loop", image.toString(), root.toString());
    fs.mounted = true;
    return fs;
  }

  /** Where it is mounted. */
  public Path root() {
    return root;
  }

  /**
   * Writes zeros into {@code root/name} until the file system has no block left (and syncs them).
   *
   * @return the filler, to delete to give the space back
   */
  public Path fill(String name) throws IOException {
    Path filler = root.resolve(name);
    try (FileChannel ch =
        FileChannel.open(filler, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      // ext4 reserves blocks for delayed allocation: some come back once the data is written
      // back, so fill again until nothing is left.
      for (int round = 0; round < 10 && (round == 0 || usable() > 0); round++) {
        for (int chunk : new int[] {1 << 20, 1 << 16, 1 << 12, 1}) {
          ByteBuffer zeros = ByteBuffer.allocateDirect(chunk);
          try {
            while (true) {
              zeros.clear();
              while (zeros.hasRemaining()) {
                ch.write(zeros);
              }
            }
          } catch (IOException full) {
            // no space for this chunk size; try a smaller one
          }
        }
        try {
          ch.force(true);
        } catch (IOException ignored) {
          // what did not fit was never acknowledged
        }
      }
    }
    return filler;
  }

  /** Bytes free for this user now. */
  public long usable() throws IOException {
    return Files.getFileStore(root).getUsableSpace();
  }

  @Override
  public void close() throws IOException {
    if (mounted) {
      mounted = false;
      try {
        try {
          run("umount", root.toString());
        } catch (IOException e) {
          run("umount", "-l", root.toString());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while unmounting " + root, e);
      }
    }
    Files.deleteIfExists(image);
  }

  /** Runs a command; fails with its output when it fails. */
  public static void run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", command) + " failed (the test needs root): " + out);
    }
  }
}
