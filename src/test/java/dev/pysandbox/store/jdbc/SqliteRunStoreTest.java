package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.api.RunStatus;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.RunStoreContract;
import dev.pysandbox.store.RunStoreContractAccess;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteRunStoreTest extends RunStoreContract {
  @TempDir Path dir;

  @Override
  protected RunStore newStore() {
    return JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"));
  }

  @Test
  void reopening_keepsRunsAndDoesNotMigrateTwice() {
    store.insert(RunStoreContractAccess.running("run_keep"), "aaaaaaaa");
    store.close();
    store = newStore();
    assertThat(store.get("run_keep", false).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
  }
}
