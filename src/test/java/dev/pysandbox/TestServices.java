package dev.pysandbox;

import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
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
    DefaultSandboxService s = DefaultSandboxService.start(config(dataDir, settings));
    s.awaitStarted();
    return s;
  }

  /** The packaged launcher, as a user would run it. */
  public static Path launcher() {
    return Path.of("bin/pysandbox").toAbsolutePath();
  }
}
