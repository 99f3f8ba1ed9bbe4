package dev.pysandbox.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.pysandbox.LoopFileSystem;
import dev.pysandbox.Sandboxed;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Whole files or none, on a real ext4 that the test fills. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class DurableFilesTest {
  @TempDir Path dir;
  LoopFileSystem fs;

  @BeforeEach
  void mount() throws Exception {
    fs = LoopFileSystem.ext4(dir, 16L << 20);
  }

  @AfterEach
  void unmount() throws Exception {
    fs.close();
  }

  @Test
  void write_onAFullDisk_isDiskFull_namingTheFileSystem_andLeavesTheOldFileAndNoTemporary()
      throws Exception {
    Path target = fs.root().resolve("data.bin");
    DurableFiles.write(target, "old".getBytes());
    Path filler = fs.fill("filler");
    byte[] big = random(2 << 20);

    assertThatExceptionOfType(DiskFullException.class)
        .isThrownBy(() -> DurableFiles.write(target, big))
        .satisfies(
            e -> {
              assertThat(e.getMessage())
                  .contains(target.toString())
                  .contains("(" + big.length + " bytes)")
                  .contains(fs.root().toString())
                  .contains("/dev/loop");
              assertThat(e.wantedBytes()).isEqualTo(big.length);
            });
    assertThat(Files.readString(target)).isEqualTo("old");
    assertThat(names()).containsExactlyInAnyOrder("data.bin", "filler", "lost+found");

    Files.delete(filler);
    DurableFiles.Written w = DurableFiles.write(target, big);
    assertThat(w.size()).isEqualTo(big.length);
    assertThat(w.sha256()).isEqualTo(Sha256.hex(big));
    assertThat(Files.readAllBytes(target)).isEqualTo(big);
    assertThat(Files.getPosixFilePermissions(target))
        .isEqualTo(PosixFilePermissions.fromString("rw-------"));
  }

  @Test
  void writeInADirectoryStream_replacesALinkAtTheName_neverWritesThroughIt() throws Exception {
    Path outside = Files.writeString(dir.resolve("outside.txt"), "untouched");
    Path link = Files.createSymbolicLink(fs.root().resolve("up.txt"), outside);
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(fs.root())) {
      DurableFiles.Written w =
          DurableFiles.write(
              (SecureDirectoryStream<Path>) ds,
              fs.root(),
              "up.txt",
              3,
              DurableFiles.bytes("new".getBytes()),
              view -> {});
      assertThat(w.size()).isEqualTo(3);
    }
    assertThat(Files.readString(outside)).isEqualTo("untouched");
    assertThat(Files.isSymbolicLink(link)).isFalse();
    assertThat(Files.readString(link, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("new");
  }

  @Test
  void writeInADirectoryStream_onAFullDisk_isDiskFull_andLeavesNoTemporary() throws Exception {
    fs.fill("filler");
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(fs.root())) {
      assertThatExceptionOfType(DiskFullException.class)
          .isThrownBy(
              () ->
                  DurableFiles.write(
                      (SecureDirectoryStream<Path>) ds,
                      fs.root(),
                      "up.bin",
                      1 << 20,
                      DurableFiles.bytes(random(1 << 20)),
                      view -> {}));
    }
    assertThat(names()).containsExactlyInAnyOrder("filler", "lost+found");
    assertThat(Files.exists(fs.root().resolve("up.bin"), LinkOption.NOFOLLOW_LINKS)).isFalse();
  }

  private java.util.List<String> names() throws Exception {
    try (Stream<Path> s = Files.list(fs.root())) {
      return s.map(p -> p.getFileName().toString()).toList();
    }
  }

  private static byte[] random(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }
}
