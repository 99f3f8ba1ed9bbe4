package dev.pysandbox;

import dev.pysandbox.app.Assembly;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Real services on a temporary data directory, with real bubblewrap and real Python. */
public final class TestServices {
  private TestServices() {}

  public static PysandboxConfig config(Path dataDir, Map<String, String> settings) {
    Map<String, String> flags = new HashMap<>(settings);
    flags.put("data_dir", dataDir.toString());
    flags.putIfAbsent("log_level", "warn");
    return PysandboxConfig.load(flags, Map.of(), null);
  }

  public static DefaultSandboxService start(Path dataDir, Map<String, String> settings) {
    DefaultSandboxService s = Assembly.start(config(dataDir, settings));
    s.awaitStarted();
    return s;
  }

  /**
   * {@code settings} plus a {@code tiers_file} (written into {@code dataDir}) that gives the
   * default tier, basic, no import policy: for tests of the OS sandbox itself, whose code imports
   * socket or ctypes to attack it, which the import policy would otherwise stop first.
   */
  public static Map<String, String> withoutImportPolicy(
      Path dataDir, Map<String, String> settings) {
    Path file = dataDir.resolve("tiers-without-import-policy.json");
    try {
      Files.writeString(file, "{\"basic\": {\"imports\": {\"deny\": []}}}");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, String> out = new HashMap<>(settings);
    out.put("tiers_file", file.toString());
    return out;
  }

  /** The packaged launcher, as a user would run it. */
  public static Path launcher() {
    return Path.of("bin/pysandbox").toAbsolutePath();
  }
}
