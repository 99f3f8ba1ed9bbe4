package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.store.ChainLink;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.RunStoreContractAccess;
import dev.pysandbox.store.StoredRun;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hash chain in the SQLite store: sealing, what a changed record looks like to {@link
 * RunStore#chain()}, tombstones, and two stores sealing at once.
 */
@Timeout(60)
@Fast
class SqliteRunChainTest {
  @TempDir Path dir;
  private RunStore store;

  @BeforeEach
  void open() {
    store = JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"));
  }

  @AfterEach
  void close() {
    store.close();
  }

  private RunRecord finished(String id, long at) {
    RunRecord r = RunStoreContractAccess.running(id);
    r = r.toBuilder().createdAt(Instant.ofEpochMilli(at).toString()).build();
    store.insert(r, "aaaaaaaa");
    RunRecord done =
        r.toBuilder()
            .status(RunStatus.SUCCEEDED)
            .stdout("out of " + id + "\n")
            .exitCode(0)
            .artifacts(
                List.of(
                    new Artifact("a.txt", 3, "c".repeat(64), "text/plain", ArtifactChange.CREATED),
                    new Artifact("gone", 0, null, "text/plain", ArtifactChange.DELETED)))
            .finishedAt(Instant.ofEpochMilli(at + 10).toString())
            .durationMs(10L)
            .build();
    assertThat(store.finish(done)).isTrue();
    return done;
  }

  private void sql(String statement, Object... args) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("pysandbox.db"));
        PreparedStatement ps = c.prepareStatement(statement)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      ps.executeUpdate();
    }
  }

  private static List<String> problems(List<ChainLink> chain) {
    List<String> out = new ArrayList<>();
    for (ChainLink l : chain) {
      if (l.problem() != null) {
        out.add(l.runId() + ":" + l.problem());
      }
    }
    return out;
  }

  @Test
  void finishedRuns_areSealedOnceInFinishOrder_andTheChainHolds() {
    finished("run_b", 2000);
    finished("run_a", 1000);
    store.insert(RunStoreContractAccess.running("run_running"), "aaaaaaaa");
    assertThat(store.get("run_a", false).orElseThrow().recordSha256()).isNull();

    assertThat(store.seal(100)).isEqualTo(2);
    assertThat(store.seal(100)).as("sealed once").isZero();

    List<ChainLink> chain = store.chain();
    assertThat(chain).extracting(ChainLink::runId).containsExactly("run_a", "run_b");
    assertThat(problems(chain)).isEmpty();
    assertThat(chain.get(0).keptFiles()).containsOnlyKeys("a.txt");
    assertThat(store.get("run_b", false).orElseThrow().recordSha256())
        .isEqualTo(chain.get(1).recordSha256())
        .hasSize(64);
  }

  @Test
  void oneChangedCharacterInARecord_isNamed_andTheRunsAfterStillHold() throws Exception {
    finished("run_a", 1000);
    finished("run_b", 2000);
    finished("run_c", 3000);
    store.seal(100);
    sql("UPDATE runs SET stdout='out of run_B\n' WHERE id='run_b'");
    assertThat(problems(store.chain())).containsExactly("run_b:record_changed");

    sql("UPDATE runs SET stdout='out of run_b\n' WHERE id='run_b'");
    assertThat(problems(store.chain())).as("changed back").isEmpty();
  }

  @Test
  void aRecordRemovedBehindTheStoresBack_orALinkRemoved_breaksTheChain() throws Exception {
    finished("run_a", 1000);
    finished("run_b", 2000);
    finished("run_c", 3000);
    store.seal(100);
    sql("DELETE FROM runs WHERE id='run_b'");
    assertThat(problems(store.chain())).containsExactly("run_b:record_missing");
    sql("DELETE FROM run_chain WHERE run_id='run_b'");
    assertThat(problems(store.chain())).containsExactly("run_c:link_broken");
    sql("DELETE FROM run_chain WHERE run_id='run_c'");
    assertThat(problems(store.chain())).containsExactly("null:chain_truncated");
  }

  @Test
  void aRunDeletedThroughTheStore_leavesATombstone_andTheChainStillHolds() {
    finished("run_a", 1000);
    finished("run_b", 2000);
    store.seal(100);
    finished("run_c", 3000); // not sealed yet: deleting it seals it first

    StoredRun gone = store.delete("local", "run_b", "delete_run").orElseThrow();
    assertThat(gone.recordBytes()).isPositive();
    assertThat(store.delete("local", "run_c", "delete_run")).isPresent();
    assertThat(store.get("run_b", false)).isEmpty();

    List<ChainLink> chain = store.chain();
    assertThat(chain).extracting(ChainLink::runId).containsExactly("run_a", "run_b", "run_c");
    assertThat(chain).extracting(ChainLink::deleted).containsExactly(false, true, true);
    assertThat(problems(chain)).isEmpty();
    assertThat(store.delete("local", "run_b", "again")).isEmpty();
  }

  @Test
  void anotherTenantsRun_andARunningRun_cannotBeDeleted() {
    finished("run_a", 1000);
    store.insert(RunStoreContractAccess.running("run_r"), "aaaaaaaa");
    assertThat(store.delete("other", "run_a", "x")).isEmpty();
    assertThat(store.delete("local", "run_r", "x")).isEmpty();
    assertThat(store.get("run_a", false)).isPresent();
  }

  @Test
  void finishedBefore_choosesByAgeAndStatus_oldestFirst() {
    finished("run_a", 1000);
    finished("run_b", 2000);
    finished("run_c", 9000);
    store.insert(RunStoreContractAccess.running("run_r"), "aaaaaaaa");
    assertThat(store.finishedBefore("local", Instant.ofEpochMilli(5000), null, 10))
        .extracting(StoredRun::runId)
        .containsExactly("run_a", "run_b");
    assertThat(store.finishedBefore("local", Instant.ofEpochMilli(5000), RunStatus.FAILED, 10))
        .isEmpty();
    assertThat(store.finishedBefore("other", Instant.ofEpochMilli(99_000), null, 10)).isEmpty();
  }

  @Test
  void twoStoresSealingAtOnce_makeOneChain() throws Exception {
    for (int i = 0; i < 200; i++) {
      finished(String.format("run_%03d", i), 1000 + i);
    }
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try (RunStore other = JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"))) {
      List<Future<Integer>> sealed = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        RunStore s = i % 2 == 0 ? store : other;
        sealed.add(pool.submit(() -> s.seal(25)));
      }
      int total = 0;
      for (Future<Integer> f : sealed) {
        total += f.get(30, TimeUnit.SECONDS);
      }
      total += store.seal(1000);
      assertThat(total).isEqualTo(200);
    } finally {
      pool.shutdownNow();
    }
    List<ChainLink> chain = store.chain();
    assertThat(chain).hasSize(200);
    assertThat(problems(chain)).isEmpty();
    assertThat(chain).extracting(ChainLink::seq).doesNotHaveDuplicates();
  }
}
