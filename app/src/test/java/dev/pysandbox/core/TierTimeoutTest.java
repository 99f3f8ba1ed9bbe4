package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.SharedServiceTest;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A tier's {@code timeout_seconds} (issue 23, item 16: a tier could not carry a default timeout),
 * on a real core: a run in the tier that names no timeout gets the tier's, a session's runs get
 * their session's tier's without naming it, a timeout the call names wins, and other tiers keep
 * {@code timeout_default}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class TierTimeoutTest extends SharedServiceTest {
  @Override
  protected Map<String, String> settings(Path dataDir) throws IOException {
    Path tiers =
        Files.writeString(dataDir.resolve("tiers.json"), "{\"quick\": {\"timeout_seconds\": 2}}");
    return Map.of(
        "pool_size", "0",
        "tiers_file", tiers.toString(),
        "tiers_allowed", "basic,quick",
        "timeout_default", "45");
  }

  private RunRecord run(String code, String session, Integer timeout, String tier) {
    return service.run(
        new ExecutionRequest(code, session, null, timeout, tier, null, false, List.of()));
  }

  @Test
  void aRunInTheTier_withNoTimeoutOfItsOwn_isStoppedAtTheTiersTimeout() {
    RunRecord r = run("while True: pass", null, null, "quick");

    assertThat(r.status()).isEqualTo(RunStatus.TIMED_OUT);
    assertThat(r.timeoutSeconds()).isEqualTo(2);
  }

  @Test
  void theCallsOwnTimeout_winsOverTheTiers_andOtherTiersKeepTimeoutDefault() {
    assertThat(run("print(1)", null, 7, "quick").timeoutSeconds()).isEqualTo(7);
    assertThat(run("print(1)", null, null, "basic").timeoutSeconds()).isEqualTo(45);
    assertThat(run("print(1)", null, null, null).timeoutSeconds()).isEqualTo(45);
  }

  @Test
  void aSessionsRuns_namingNoTier_getTheSessionsTiersTimeout() {
    service.createSession("quick-session", null, LimitRequest.DEFAULTS, "quick");
    try {
      assertThat(run("x = 1", "quick-session", null, null).timeoutSeconds()).isEqualTo(2);
      assertThat(run("x", "quick-session", 9, null).timeoutSeconds()).isEqualTo(9);
    } finally {
      service.closeSession("quick-session");
    }
  }
}
