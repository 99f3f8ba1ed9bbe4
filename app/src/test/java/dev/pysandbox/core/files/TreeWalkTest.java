package dev.pysandbox.core.files;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.LoopFileSystem;
import dev.pysandbox.Sandboxed;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walk by descriptor on trees the test builds itself (by descriptor too: their paths are longer
 * than PATH_MAX): counting below the listing depth through "..", the listing's limits, and deleting
 * however deep.
 *
 * <p>The trees live on an ext4 of the test's own, where a directory takes a block: on a tmpfs (the
 * {@code /tmp} of Debian 13 and of fresh CI images) directories take none, and the counts would
 * prove nothing (issue 23). Each tree is deleted by the walk itself, also when an assertion fails:
 * a tree deeper than PATH_MAX left to JUnit's {@code @TempDir} took it minutes to remove.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class TreeWalkTest {
  @TempDir static Path nativeDir;
  @TempDir static Path imageDir;
  static LoopFileSystem disk;
  Path root;

  @BeforeAll
  static void loadLibraryAndMount() throws Exception {
    NativeFs.useDirectory(nativeDir);
    NativeFs.require();
    disk = LoopFileSystem.ext4(imageDir, 96L << 20);
  }

  @AfterAll
  static void unmount() throws Exception {
    if (disk != null) {
      disk.close();
    }
  }

  @BeforeEach
  void newRoot() throws Exception {
    root = Files.createTempDirectory(disk.root(), "tree");
  }

  @AfterEach
  void deleteTree() {
    if (Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      TreeDeletion.deleteTree(root);
    }
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A chain of {@code depth} directories named {@code name} under root, a file at the bottom. */
  static void chain(Path root, int depth, String name, int fileBytes) throws Exception {
    List<Descriptor> open = new ArrayList<>();
    try {
      Descriptor d = Descriptor.openDirectory(root);
      open.add(d);
      for (int i = 0; i < depth; i++) {
        d.makeDirectory(b(name), 0755);
        d = d.openDirectory(b(name));
        open.add(d);
      }
      try (Descriptor f = d.createFile(b("bottom.bin"), 0644)) {
        ByteBuffer buf = ByteBuffer.allocateDirect(Math.max(1, fileBytes));
        f.writeFully(buf, fileBytes, 0);
      }
    } finally {
      for (Descriptor d : open) {
        d.close();
      }
    }
  }

  @Test
  void aTree3000Deep_isCountedBelowTheListingDepth_reportedOnce_andDeleted() throws Exception {
    chain(root, 3000, "d", 1 << 20);
    long total = WorkspaceFiles.totalBytes(root, Long.MAX_VALUE);
    assertThat(total)
        .as("3000 directories and 1 MiB of data")
        .isGreaterThan(3000L * 4096 + (1 << 20));

    WorkspaceFiles.Snapshot s = WorkspaceFiles.snapshot(root, Map.of(), true);
    assertThat(s.allocatedBytes()).isEqualTo(total);
    assertThat(s.files()).hasSize(1);
    var tooDeep = s.files().entrySet().iterator().next();
    assertThat(tooDeep.getKey()).isEqualTo("d/".repeat(TreeWalk.LIST_DEPTH - 1) + "d");
    assertThat(tooDeep.getValue().skipped()).isEqualTo(WorkspaceFiles.TOO_DEEP);

    assertThat(WorkspaceFiles.totalBytes(root, 100_000)).as("stops once past").isLessThan(total);

    TreeDeletion.deleteTree(root);
    assertThat(Files.exists(root, LinkOption.NOFOLLOW_LINKS)).isFalse();
  }

  @Test
  void pathsLongerThanPathMax_areListed_hashed_andDeleted() throws Exception {
    String name = "n".repeat(250);
    chain(root, 20, name, 3);
    WorkspaceFiles.Snapshot s = WorkspaceFiles.snapshot(root, Map.of(), true);
    String path = (name + "/").repeat(20) + "bottom.bin";
    assertThat(s.files()).containsOnlyKeys(path);
    assertThat(s.files().get(path).sha256())
        .isEqualTo("709e80c88487a2411e1ee4dfb9f22a861492d20c4765150c0c794abd70f8147c");
    TreeDeletion.deleteTree(root);
    assertThat(Files.exists(root, LinkOption.NOFOLLOW_LINKS)).isFalse();
  }

  @Test
  void linksAndDirectories_countWhatTheyTakeOnDisk() throws Exception {
    for (int i = 0; i < 50; i++) {
      Files.createSymbolicLink(root.resolve("l" + i), Path.of("x".repeat(4000)));
      Files.createDirectory(root.resolve("d" + i));
    }
    assertThat(WorkspaceFiles.totalBytes(root, Long.MAX_VALUE))
        .as("100 blocks of 4 KiB at least")
        .isGreaterThanOrEqualTo(100 * 4096L);
    assertThat(WorkspaceFiles.snapshot(root, Map.of(), true).files())
        .hasSize(50)
        .allSatisfy((p, f) -> assertThat(f.skipped()).startsWith("a symbolic link"));
  }
}
