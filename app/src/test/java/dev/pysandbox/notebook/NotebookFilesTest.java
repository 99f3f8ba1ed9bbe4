package dev.pysandbox.notebook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Fast;
import dev.pysandbox.api.RunRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A run's two notebook files: written whole, replaced whole, leftovers of a crash removed. */
@Fast
class NotebookFilesTest {
  @TempDir Path dir;

  @Test
  void write_createsTheRunDirectoryAndBothFiles_andLeavesNoTemporaryFile() throws Exception {
    Path runDir = dir.resolve("runs").resolve("run_00000000000000000001");
    assertThat(NotebookFiles.present(runDir)).isFalse();

    RunRecord run = RunFixtures.plain();
    NotebookFiles.write(runDir, run);

    assertThat(names(runDir)).containsExactlyInAnyOrder(NotebookFiles.IPYNB, NotebookFiles.PY);
    assertThat(NotebookFiles.present(runDir)).isTrue();
    assertThat(Files.readString(runDir.resolve(NotebookFiles.IPYNB)))
        .isEqualTo(Notebooks.ipynb(run));
    assertThat(Files.readString(runDir.resolve(NotebookFiles.PY))).isEqualTo(Notebooks.marimo(run));
  }

  @Test
  void write_replacesEarlierNotebooks() throws Exception {
    NotebookFiles.write(dir, RunFixtures.plain());
    RunRecord later = RunFixtures.zeroDivision("run_00000000000000000002");
    NotebookFiles.write(dir, later);

    assertThat(names(dir)).containsExactlyInAnyOrder(NotebookFiles.IPYNB, NotebookFiles.PY);
    assertThat(
            new ObjectMapper()
                .readTree(dir.resolve(NotebookFiles.IPYNB).toFile())
                .at("/metadata/pysandbox/run_id")
                .asText())
        .isEqualTo(later.runId());
    assertThat(Files.readString(dir.resolve(NotebookFiles.PY))).contains("y = x / 0");
  }

  @Test
  void write_removesTemporaryFilesACrashLeft_butNotOtherFiles() throws Exception {
    // A dead process's temporary file, and one of this process that no write of its own holds.
    long self = ProcessHandle.current().pid();
    Files.writeString(dir.resolve(".notebook.ipynb.2147483646.00ff.tmp"), "{\"half\": ");
    Files.writeString(dir.resolve(".notebook.py." + self + ".abcd.tmp"), "import mar");
    Files.writeString(dir.resolve("stdout.txt"), "kept");
    Files.writeString(dir.resolve(".notebook.py.tmp"), "not ours: no pid");

    NotebookFiles.write(dir, RunFixtures.plain());

    assertThat(names(dir))
        .containsExactlyInAnyOrder(
            NotebookFiles.IPYNB, NotebookFiles.PY, "stdout.txt", ".notebook.py.tmp");
  }

  @Test
  void present_needsBothFiles() throws Exception {
    NotebookFiles.write(dir, RunFixtures.plain());
    Files.delete(dir.resolve(NotebookFiles.PY));
    assertThat(NotebookFiles.present(dir)).isFalse();
  }

  @Test
  void write_ofARecordWithoutCode_touchesNothing() {
    RunRecord noCode = RunRecord.builder().runId("run_00000000000000000003").build();
    assertThatThrownBy(() -> NotebookFiles.write(dir.resolve("r"), noCode))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("run_00000000000000000003 has no code");
    assertThat(dir.resolve("r")).doesNotExist();
  }

  private static List<String> names(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).toList();
    }
  }
}
