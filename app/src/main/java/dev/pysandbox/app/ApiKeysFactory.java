package dev.pysandbox.app;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.store.ApiKeys;
import dev.pysandbox.util.TimeSource;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;

/**
 * Opens the API keys of a data directory, for the faces that need them (the {@code keys} command,
 * the HTTP face) without a whole core: they live in the data directory's database, next to the run
 * history, so every process sharing the directory sees the same keys.
 */
public final class ApiKeysFactory {
  private ApiKeysFactory() {}

  /**
   * The keys of {@code config}'s data directory, on the system's time; the directory is made (and
   * kept private to its owner) as a server makes it.
   *
   * @param lookOnly use a database already at the latest migration without Flyway (a command, or a
   *     server whose core has opened the store); one that is not yet is migrated either way
   * @throws PysandboxException {@code store_unavailable} when the directory or the database cannot
   *     be used
   */
  public static ApiKeys open(PysandboxConfig config, boolean lookOnly) {
    return open(config, TimeSource.system(), lookOnly);
  }

  /** {@link #open(PysandboxConfig, boolean)} on {@code clock} (a test's time). */
  public static ApiKeys open(PysandboxConfig config, Clock clock, boolean lookOnly) {
    DataLayout layout = new DataLayout(config.dataDir());
    try {
      Files.createDirectories(config.dataDir());
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE,
          "cannot use the data directory " + config.dataDir() + ": " + e.getMessage(),
          e);
    }
    layout.restrictDataDir();
    return StoreFactory.openApiKeys(layout, clock, lookOnly);
  }
}
