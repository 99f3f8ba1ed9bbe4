package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 9, its last part: each run kept a full copy of every file it changed, so a 200 MiB
 * file kept by 50 runs was stored, and counted against the tenant's storage, 50 times. Now each
 * distinct content is one blob ({@code blobs/<2 hex>/<sha256>}), freed when no run references it; a
 * tenant's storage counts each blob once; runs kept the old way are moved in at start; a link
 * planted under {@code blobs/} or {@code runs/} is never followed. Real bwrap sandboxes, real
 * SQLite.
 */
@Sandboxed
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class BlobStoreTest {
  @TempDir Path dataDir;

  private static final int MIB = 1 << 20;

  /** Writes {@code mib} MiB of seeded random bytes to {@code name}, one byte then flipped at 7. */
  private static ExecutionRequest big(String name, int mib, boolean flip) {
    return new ExecutionRequest(
        "import random\n"
            + "rng = random.Random(24)\n"
            + "with open('"
            + name
            + "', 'wb') as f:\n"
            + "    for _ in range("
            + mib
            + "):\n"
            + "        f.write(rng.randbytes(1 << 20))\n"
            + (flip
                ? "with open('"
                    + name
                    + "', 'r+b') as f:\n    f.seek(7)\n    b = f.read(1)\n"
                    + "    f.seek(7)\n    f.write(bytes([b[0] ^ 1]))\n"
                : ""),
        null,
        null,
        120);
  }

  private static ExecutionRequest small(String name, String content) {
    return new ExecutionRequest(
        "import os\nos.makedirs(os.path.dirname('"
            + name
            + "') or '.', exist_ok=True)\nopen('"
            + name
            + "', 'w').write('"
            + content
            + "')\n",
        null,
        null,
        30);
  }

  @Test
  void a200MiBFile_keptByThreeRuns_isOneBlob_andAOneByteChangeIsOneMore() throws Exception {
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "0", "notebooks", "false"))) {
      String sha = null;
      for (int i = 0; i < 3; i++) {
        RunRecord r = service.run(big("big.bin", 200, false));
        assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
        Artifact a = artifact(r, "big.bin");
        assertThat(a.skipped()).isNull();
        assertThat(a.sizeBytes()).isEqualTo(200L * MIB);
        sha = sha == null ? a.sha256() : sha;
        assertThat(a.sha256()).as("the same content each time").isEqualTo(sha);
      }
      assertThat(blobs()).as("three runs, one content: one blob").hasSize(1);
      assertThat(blobBytes()).isEqualTo(200L * MIB);

      RunRecord changed = service.run(big("big.bin", 200, true));
      assertThat(artifact(changed, "big.bin").sha256()).isNotEqualTo(sha);
      assertThat(blobs()).as("a one-byte change is another content").hasSize(2);
      assertThat(blobBytes()).isEqualTo(400L * MIB);
      assertThatThrownBy(() -> service.readArtifact(changed.runId(), null, "big.bin", 16))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.ARTIFACT_TOO_LARGE));
    }
    System.out.println(
        "200 MiB x 3 runs + 1 run with one byte changed: "
            + blobs().size()
            + " blobs, "
            + blobBytes()
            + " bytes under blobs/");
  }

  @Test
  void deletingOneOfTwoRunsSharingABlob_keepsIt_theLastOneFreesIt_purgeFreesOnlyUnreferenced()
      throws Exception {
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "0", "notebooks", "false"))) {
      RunRecord a = service.run(small("same.txt", "shared content"));
      RunRecord b = service.run(small("same.txt", "shared content"));
      RunRecord c = service.run(small("other.txt", "other content"));
      assertThat(blobs()).hasSize(2);

      assertThat(service.deleteRun(a.runId(), true).filesBytes())
          .as("the tenant's own figure: its other run still keeps it, so nothing is freed")
          .isZero();
      assertThat(blobs()).hasSize(2);
      assertThat(service.readArtifact(b.runId(), null, "same.txt", 1000).content())
          .as("the other run still reads it")
          .isEqualTo("shared content");

      var dry = service.purgeRuns(0, null, true);
      assertThat(dry.filesBytes()).isEqualTo(14 + 13);
      assertThat(blobs()).as("a dry run deletes nothing").hasSize(2);
      var purged = service.purgeRuns(0, null, false);
      assertThat(purged.runs()).isEqualTo(2);
      assertThat(purged.filesBytes()).isEqualTo(14 + 13);
      assertThat(blobs()).as("no run references them any more").isEmpty();
      assertThat(c.artifacts()).hasSize(1);
    }
  }

  @Test
  void aTenantsStorage_countsABlobOnce_andAnotherTenantsCopyChangesNothingItSees()
      throws Exception {
    try (DefaultSandboxService service =
        TestServices.start(
            dataDir,
            Map.of("pool_size", "0", "notebooks", "false", "tenant_storage_max_mb", "2"))) {
      SandboxService alice = service.forTenant("alice");
      SandboxService bob = service.forTenant("bob");
      RunRecord first = alice.run(big("x.bin", 1, false));
      assertThat(artifact(first, "x.bin").skipped()).isNull();
      for (int i = 0; i < 3; i++) {
        RunRecord again = alice.run(big("x.bin", 1, false));
        assertThat(artifact(again, "x.bin").skipped())
            .as("the same content again costs alice nothing")
            .isNull();
      }
      RunRecord other = alice.run(big("y.bin", 2, false));
      assertThat(artifact(other, "y.bin").skipped())
          .as("another content past what is left")
          .contains("tenant_storage_max_mb")
          .contains("1.0 MiB was left");
      assertThat(service.core().store().keptBytes("alice")).isEqualTo(MIB);
      long aliceWouldFree = alice.purgeRuns(0, null, true).filesBytes();

      // Bob keeps the same content: it counts for him too (isolation), and alice sees the same.
      RunRecord bobs = bob.run(big("x.bin", 1, false));
      assertThat(artifact(bobs, "x.bin").skipped()).isNull();
      assertThat(service.core().store().keptBytes("bob")).isEqualTo(MIB);
      assertThat(service.core().store().keptBytes("alice")).isEqualTo(MIB);
      assertThat(blobs()).as("stored once on disk").hasSize(1);
      var dry = alice.purgeRuns(0, null, true);
      assertThat(dry.filesBytes())
          .as("alice's figure does not say that bob keeps the same content")
          .isEqualTo(aliceWouldFree)
          .isEqualTo(MIB);
      alice.purgeRuns(0, null, false);
      assertThat(service.core().store().keptBytes("alice")).isZero();
      assertThat(bob.readArtifact(bobs.runId(), null, "x.bin", 2L * MIB).sizeBytes())
          .isEqualTo(MIB);
    }
  }

  @Test
  void runsKeptTheOldWay_moveIntoTheStoreAtStart_onceAndWhole_linksLeftUnfollowed()
      throws Exception {
    Path secret = Files.writeString(dataDir.resolveSibling(dataDir.getFileName() + "-secret"), "s");
    RunRecord one;
    RunRecord two;
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "0", "notebooks", "false"))) {
      one = service.run(small("a/one.txt", "first"));
      two = service.run(small("two.txt", "second"));
      assertThat(service.verifyRecords().ok()).isTrue();
    }
    // The old layout: each run's files under runs/<id>/files, no blob rows; one run was already
    // moved (a migration cut short), the other not.
    toOldLayout(one, "a/one.txt");
    Path oldTwo = toOldLayout(two, "two.txt").getParent();
    Files.createSymbolicLink(oldTwo.resolve("planted-link"), secret);
    Files.createLink(oldTwo.resolve("planted-hardlink"), secret);
    assertThat(blobs()).isEmpty();

    for (int start = 0; start < 2; start++) {
      try (DefaultSandboxService service =
          TestServices.start(dataDir, Map.of("pool_size", "0", "notebooks", "false"))) {
        service.awaitStarted();
        assertThat(service.readArtifact(one.runId(), null, "a/one.txt", 100).content())
            .isEqualTo("first");
        assertThat(service.readArtifact(two.runId(), null, "two.txt", 100).content())
            .isEqualTo("second");
        assertThat(service.verifyRecords().ok()).as("%s", service.verifyRecords()).isTrue();
        assertThat(blobs()).as("start %d: each content once", start).hasSize(2);
        assertThat(Files.exists(dataDir.resolve("runs/" + one.runId() + "/files"))).isFalse();
        assertThat(oldTwo.resolve("two.txt")).doesNotExist();
        assertThat(Files.isSymbolicLink(oldTwo.resolve("planted-link")))
            .as("left where it is, not followed")
            .isTrue();
        assertThat(oldTwo.resolve("planted-hardlink")).exists();
        assertThat(Files.readString(secret)).isEqualTo("s");
        assertThat(rows("SELECT count(*) FROM run_files")).isEqualTo(2);
      }
    }
  }

  @Test
  void linksPlantedInBlobs_areRefused_notFollowed_andTheNextCopyReplacesThem() throws Exception {
    Path secret = Files.writeString(dataDir.resolveSibling(dataDir.getFileName() + "-secret"), "s");
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "0", "notebooks", "false"))) {
      RunRecord r = service.run(small("k.txt", "kept!"));
      Path blob = blob(artifact(r, "k.txt").sha256());

      Files.delete(blob);
      Files.createSymbolicLink(blob, secret);
      assertRefused(service, r);
      Files.delete(blob);
      Files.createLink(blob, secret);
      assertRefused(service, r);
      assertThat(service.verifyRecords().problems())
          .extracting(p -> p.kind())
          .containsExactly("file_changed");

      RunRecord again = service.run(small("k.txt", "kept!"));
      assertThat(artifact(again, "k.txt").skipped()).isNull();
      assertThat(Files.isSymbolicLink(blob)).isFalse();
      assertThat(service.readArtifact(r.runId(), null, "k.txt", 100).content())
          .as("the next copy of the same content replaced what was planted")
          .isEqualTo("kept!");
      assertThat(Files.readString(secret)).isEqualTo("s");

      // A link where a blob's directory belongs.
      Path shard = blob.getParent();
      Path moved = shard.resolveSibling("moved");
      Files.move(shard, moved);
      Files.createSymbolicLink(shard, moved);
      assertRefused(service, r);
    }
  }

  private static void assertRefused(DefaultSandboxService service, RunRecord r) {
    assertThatThrownBy(() -> service.readArtifact(r.runId(), null, "k.txt", 100))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FORBIDDEN));
  }

  /** Moves a run's blob back to {@code runs/<id>/files/<path>} and drops its rows. */
  private Path toOldLayout(RunRecord r, String path) throws Exception {
    Path old = new DataLayout(dataDir).runFiles(r.runId()).resolve(path);
    Files.createDirectories(old.getParent());
    Files.move(blob(artifact(r, path).sha256()), old);
    rows("DELETE FROM run_files WHERE run_id='" + r.runId() + "'");
    rows("DELETE FROM blobs WHERE sha256='" + artifact(r, path).sha256() + "'");
    return old;
  }

  private long rows(String sql) throws Exception {
    try (Connection c =
            DriverManager.getConnection(
                "jdbc:sqlite:" + new DataLayout(dataDir).database().toAbsolutePath());
        Statement st = c.createStatement()) {
      if (sql.startsWith("SELECT")) {
        try (ResultSet rs = st.executeQuery(sql)) {
          return rs.next() ? rs.getLong(1) : 0;
        }
      }
      return st.executeUpdate(sql);
    }
  }

  private Path blob(String sha) {
    return dataDir.resolve("blobs").resolve(sha.substring(0, 2)).resolve(sha);
  }

  /** The blobs on disk (links not followed; copies being written left out). */
  private List<Path> blobs() throws IOException {
    Path dir = dataDir.resolve("blobs");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> all = Files.walk(dir)) {
      return all.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
          .filter(p -> !p.getParent().getFileName().toString().equals("tmp"))
          .toList();
    }
  }

  private long blobBytes() throws IOException {
    long total = 0;
    for (Path p : blobs()) {
      total += Files.size(p);
    }
    return total;
  }

  private static Artifact artifact(RunRecord r, String path) {
    return r.artifacts().stream().filter(a -> a.path().equals(path)).findFirst().orElseThrow();
  }
}
