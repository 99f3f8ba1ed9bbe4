package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.DeleteResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PurgeResult;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RerunRequest;
import dev.pysandbox.api.RunDiff;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionExport;
import dev.pysandbox.api.VerifyReport;
import dev.pysandbox.api.Version;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.config.DataLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit trail on a real core with real sandboxes: notebooks written after each run, provenance,
 * rerun, diff, delete, purge, export and the hash chain's verification.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class AuditTrailTest {
  @TempDir Path dataDir;
  ManualTime clock = ManualTime.wallOnly(Instant.parse("2026-11-25T10:00:00Z"));
  DefaultSandboxService service;

  @BeforeEach
  void start() {
    service = Assembly.create(TestServices.config(dataDir, Map.of()), clock);
    service.startBackground();
    service.awaitStarted();
  }

  @AfterEach
  void stop() {
    service.close();
  }

  private RunRecord run(String session, String code, String description) {
    return service.run(new ExecutionRequest(code, session, description, null));
  }

  private Path runDir(String runId) {
    return new DataLayout(dataDir).runsDir().resolve(runId);
  }

  /** Where a kept file's content is: the blob store, by its sha256. */
  private Path blob(RunRecord r, String path) {
    return KeptBlobPaths.of(dataDir, r, path);
  }

  private static void awaitFile(Path file) throws InterruptedException {
    Await.until(file + " exists", () -> Files.exists(file), exists -> exists);
  }

  private void sql(String statement) throws Exception {
    try (Connection c =
            DriverManager.getConnection(
                "jdbc:sqlite:" + new DataLayout(dataDir).database().toAbsolutePath());
        Statement st = c.createStatement()) {
      st.executeUpdate(statement);
    }
  }

  @Test
  void everyFinishedRun_getsItsNotebooks_andItsProvenance() throws Exception {
    RunRecord r = run(null, "print('hello')", "greeting");
    awaitFile(runDir(r.runId()).resolve("notebook.ipynb"));
    awaitFile(runDir(r.runId()).resolve("notebook.py"));

    RunRecord got = service.getRun(r.runId(), false, 0, true);
    assertThat(got.notebookSource()).contains("import marimo");
    assertThat(got.notebookPyPath()).endsWith(r.runId() + "/notebook.py");
    assertThat(got.notebookIpynbPath()).endsWith(r.runId() + "/notebook.ipynb");
    assertThat(got.viewCommand()).contains("marimo edit").contains("jupyter notebook");
    assertThat(service.getRun(r.runId(), false).notebookSource()).as("only when asked").isNull();

    assertThat(got.interpreter()).matches("3\\.\\d+\\.\\d+");
    assertThat(got.envHash()).hasSize(64);
    assertThat(got.serverVersion()).isEqualTo(Version.VALUE);
    assertThat(got.backend()).isEqualTo("bwrap");
  }

  @Test
  void startUp_writesTheNotebooksACrashLeftUnwritten_andSealsWhatItLeftUnsealed() throws Exception {
    RunRecord r = run(null, "print('before the crash')", null);
    awaitFile(runDir(r.runId()).resolve("notebook.py"));
    service.close();
    Files.delete(runDir(r.runId()).resolve("notebook.py"));
    Files.delete(runDir(r.runId()).resolve("notebook.ipynb"));
    sql("DELETE FROM run_chain");
    sql("UPDATE run_chain_head SET seq = 0, record_sha256 = '" + "0".repeat(64) + "'");
    sql("UPDATE runs SET record_sha256 = NULL");

    service = Assembly.create(TestServices.config(dataDir, Map.of()), clock);
    service.startBackground();
    service.awaitStarted();
    awaitFile(runDir(r.runId()).resolve("notebook.ipynb"));
    awaitFile(runDir(r.runId()).resolve("notebook.py"));
    Await.until(
        "the record of " + r.runId() + " is sealed",
        () -> service.getRun(r.runId(), false).recordSha256(),
        sha -> sha != null);
    assertThat(service.getRun(r.runId(), false).recordSha256()).hasSize(64);
  }

  @Test
  void theMarimoNotebook_runAsCodeInASandbox_printsWhatTheRunPrinted() {
    RunRecord r =
        run(null, "x = 6\ntext = '''a\n\n  b'''\nprint(text)\nprint('x is', x * 7)", null);
    String source = service.getRun(r.runId(), false, 0, true).notebookSource();
    // pysandbox run notebook.py: the code has no __file__; the stand-in reads its cells back
    // from the source the runner compiled.
    RunRecord again = run(null, source, null);
    assertThat(again.status()).as("%s", again.error()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(again.stdout()).isEqualTo(r.stdout());
  }

  @Test
  void aNotebookDeletedOnDisk_isWrittenAgainWhenAskedFor() throws Exception {
    RunRecord r = run(null, "print(1)", null);
    awaitFile(runDir(r.runId()).resolve("notebook.py"));
    Files.delete(runDir(r.runId()).resolve("notebook.py"));
    assertThat(service.getRun(r.runId(), false, 0, true).notebookSource()).isNotEmpty();
    assertThat(runDir(r.runId()).resolve("notebook.py")).exists();
  }

  @Test
  void rerun_linksToItsParent_keepsTheOriginalsLimits_andDiffComparesThem() {
    service.createSession("limited", null, new LimitRequest(200, 64, null, null));
    RunRecord parent =
        service.run(
            new ExecutionRequest(
                "import sys\nprint(sys.version_info[0])\n1/0", "limited", "first try", 17));
    assertThat(parent.status()).isEqualTo(RunStatus.FAILED);

    RunRecord child =
        service.rerun(
            new RerunRequest(parent.runId(), "print(3)\n2", null, null, null), RunListener.NONE);
    assertThat(child.parentRunId()).isEqualTo(parent.runId());
    assertThat(child.sessionId()).as("one-shot unless a session is named").isNull();
    assertThat(child.description()).isEqualTo("first try");
    assertThat(child.timeoutSeconds()).isEqualTo(17);
    assertThat(child.limits()).containsEntry("memory_limit_mb", 200L);
    assertThat(child.limits().get("pids_limit")).isEqualTo(64);
    assertThat(child.status()).isEqualTo(RunStatus.SUCCEEDED);

    RunDiff d = service.diffRuns(child.runId(), null);
    assertThat(d.relationship()).isEqualTo(RunDiff.Relationship.PARENT_CHILD);
    assertThat(d.codeDiff()).contains("-1/0").contains("+2");
    assertThat(d.summary()).isNotBlank();
    assertThat(service.diffRuns(parent.runId(), child.runId()).relationship())
        .isEqualTo(RunDiff.Relationship.CHILD_PARENT);

    RunRecord same =
        service.rerun(
            new RerunRequest(parent.runId(), null, "again", 5, "limited"), RunListener.NONE);
    assertThat(same.sessionId()).isEqualTo("limited");
    assertThat(same.code()).isNull();
    assertThat(service.getRun(same.runId(), true).code())
        .isEqualTo("import sys\nprint(sys.version_info[0])\n1/0");
    assertThat(service.diffRuns(same.runId(), child.runId()).relationship())
        .isEqualTo(RunDiff.Relationship.SIBLINGS);

    assertThatThrownBy(() -> service.diffRuns(parent.runId(), null))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(
            () ->
                service
                    .forTenant("other")
                    .rerun(
                        new RerunRequest(parent.runId(), null, null, null, null), RunListener.NONE))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
  }

  @Test
  void delete_removesTheRecordAndItsFiles_refusesARunningRun_andTheChainStillVerifies()
      throws Exception {
    RunRecord kept = run(null, "open('out.txt', 'w').write('x' * 1000)", null);
    assertThat(blob(kept, "out.txt")).exists();
    RunRecord other = run(null, "print(2)", null);

    assertThatThrownBy(() -> service.forTenant("other").deleteRun(kept.runId(), true))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));

    DeleteResult d = service.deleteRun(kept.runId(), true);
    assertThat(d.deleted()).isTrue();
    assertThat(d.filesBytes()).isGreaterThanOrEqualTo(1000);
    assertThat(blob(kept, "out.txt")).as("no other run keeps it").doesNotExist();
    assertThat(runDir(kept.runId())).doesNotExist();
    assertThatThrownBy(() -> service.getRun(kept.runId(), false))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
    assertThat(service.deleteRun(other.runId(), false).filesDeleted()).isFalse();

    RunRecord running =
        service.start(
            new ExecutionRequest("import time; time.sleep(30)", null, null, 60), RunListener.NONE);
    assertThatThrownBy(() -> service.deleteRun(running.runId(), true))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e ->
                assertThat(e)
                    .hasMessageContaining("cancel")
                    .extracting(PysandboxException::code)
                    .isEqualTo(ErrorCode.INVALID_ARGUMENT));
    service.cancelRun(running.runId());
    service.getRun(running.runId(), false, 20);

    VerifyReport v = service.verifyRecords();
    assertThat(v.problems()).isEmpty();
    assertThat(v.ok()).isTrue();
    assertThat(v.tombstones()).isEqualTo(2);
  }

  @Test
  void purge_dryRunChangesNothing_thenPurgesOnlyOldRuns_andVerifyPassesAfter() throws Exception {
    RunRecord old1 = run(null, "print('old')", null);
    RunRecord old2 = run(null, "1/0", null);
    clock.advance(Duration.ofDays(10));
    RunRecord recent = run(null, "print('new')", null);
    // Both old runs' notebooks are written (in the background) before the dry run counts bytes.
    for (RunRecord old : List.of(old1, old2)) {
      awaitFile(runDir(old.runId()).resolve("notebook.py"));
      awaitFile(runDir(old.runId()).resolve("notebook.ipynb"));
    }

    PurgeResult dry = service.purgeRuns(5, null, true);
    assertThat(dry.dryRun()).isTrue();
    assertThat(dry.runs()).isEqualTo(2);
    assertThat(dry.runIds()).containsExactlyInAnyOrder(old1.runId(), old2.runId());
    assertThat(dry.filesBytes()).isPositive();
    assertThat(service.getRun(old1.runId(), false)).isNotNull();
    assertThat(runDir(old1.runId())).exists();

    assertThat(service.purgeRuns(5, RunStatus.FAILED, true).runIds()).containsExactly(old2.runId());

    PurgeResult done = service.purgeRuns(5, null, false);
    assertThat(done.runs()).isEqualTo(2);
    assertThat(done.bytesFreed()).isEqualTo(dry.bytesFreed());
    assertThat(runDir(old1.runId())).doesNotExist();
    assertThat(service.getRun(recent.runId(), false).status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(service.purgeRuns(5, null, false).runs()).isZero();

    VerifyReport v = service.verifyRecords();
    assertThat(v.ok()).as("%s", v.problems()).isTrue();
    assertThat(v.links()).isEqualTo(3);
    assertThat(v.tombstones()).isEqualTo(2);
  }

  @Test
  void verify_namesARecordWithOneChangedByte_andAKeptFileWithOneChangedByte() throws Exception {
    RunRecord a = run(null, "print('a')", null);
    RunRecord b = run(null, "open('data.bin', 'wb').write(bytes(range(200)))", null);
    RunRecord c = run(null, "print('c')", null);
    assertThat(service.verifyRecords().ok()).isTrue();

    sql("UPDATE runs SET stdout = 'A' || substr(stdout, 2) WHERE id = '" + a.runId() + "'");
    Path file = blob(b, "data.bin");
    byte[] data = Files.readAllBytes(file);
    data[100] ^= 1;
    Files.write(file, data);

    VerifyReport v = service.verifyRecords();
    assertThat(v.ok()).isFalse();
    assertThat(v.problems())
        .extracting(p -> p.runId() + ":" + p.kind())
        .containsExactlyInAnyOrder(a.runId() + ":record_changed", b.runId() + ":file_changed");
    assertThat(v.firstBreak()).isEqualTo(v.problems().get(0));
    assertThat(v.problems()).noneMatch(p -> p.runId().equals(c.runId()));

    Files.delete(file);
    assertThat(service.verifyRecords().problems())
        .extracting(p -> p.runId() + ":" + p.kind())
        .contains(b.runId() + ":file_missing");
  }

  @Test
  void exportSession_holdsTheSessionsRunsInOrder_alsoAfterTheSessionClosed() throws Exception {
    run("exp", "x = 1\nprint('STEP-ALPHA', x)", "one");
    run("exp", "print('STEP-BRAVO')\n1/0", "two");
    run("exp", "print('STEP-CHARLIE', x + 1)", "three");
    run("elsewhere", "print('not this')", null);
    service.closeSession("exp");

    SessionExport e = service.exportSession("exp", "ipynb");
    assertThat(e.runCount()).isEqualTo(3);
    assertThat(e.failedCount()).isEqualTo(1);
    assertThat(Path.of(e.path())).exists().startsWith(dataDir.resolve("exports"));
    String text = Files.readString(Path.of(e.path()), StandardCharsets.UTF_8);
    assertThat(text).isEqualTo(e.content());
    assertThat(text.indexOf("STEP-ALPHA")).isPositive().isLessThan(text.indexOf("STEP-BRAVO"));
    assertThat(text.indexOf("STEP-BRAVO")).isLessThan(text.indexOf("STEP-CHARLIE"));
    assertThat(text).doesNotContain("not this");

    assertThat(service.exportSession("exp", "marimo").content()).contains("import marimo");
    assertThatThrownBy(() -> service.exportSession("exp", "pdf"))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            ex -> assertThat(ex.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> service.exportSession("nothing-here", "ipynb"))
        .isInstanceOfSatisfying(
            PysandboxException.class, ex -> assertThat(ex.code()).isEqualTo(ErrorCode.NOT_FOUND));
  }
}
