package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 2: under approval_policy=always, create_session with packages built them (a build
 * runs the package's code, with a way to the index) while run_python with the same packages waited
 * for a person. Now a build waits for approval on every path.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Sandboxed
class PackageBuildApprovalTest {
  @TempDir Path dataDir;
  @TempDir Path wheels;

  @Test
  void createSessionMayNotBuild_anApprovedRunBuildsForItsSession_aBuiltOneIsUsed()
      throws Exception {
    TinyWheels.build(wheels, "tinypkg", "3.0");
    try (SimpleIndex index = SimpleIndex.serve(wheels);
        DefaultSandboxService service =
            TestServices.start(
                dataDir,
                Map.of(
                    "pool_size", "0",
                    "approval_policy", "always",
                    "index_url", index.url().toString(),
                    "network_allow_private", "true"))) {
      List<String> pkgs = List.of("tinypkg==3.0");
      assertThatThrownBy(
              () -> service.createSession("built", null, LimitRequest.DEFAULTS, null, pkgs))
          .isInstanceOf(PysandboxException.class)
          .satisfies(
              e ->
                  assertThat(((PysandboxException) e).code())
                      .isEqualTo(ErrorCode.APPROVAL_REQUIRED))
          .hasMessageContaining("tinypkg==3.0")
          .hasMessageContaining("approval_policy is always")
          .hasMessageContaining("run_python");
      assertThat(service.listEnvironments().environments()).as("nothing was built").isEmpty();
      assertThat(service.listSessions()).isEmpty();

      RunRecord held =
          service.run(
              new ExecutionRequest(
                  "import tinypkg; print(tinypkg.hello())",
                  "built",
                  null,
                  120,
                  null,
                  null,
                  false,
                  pkgs));
      assertThat(held.status()).isEqualTo(RunStatus.AWAITING_APPROVAL);
      assertThat(service.listEnvironments().environments()).isEmpty();
      service.decideApproval(held.approvalId(), true, "cli:test", "cli", "reviewed");
      RunRecord done = service.getRun(held.runId(), false, 60);
      while (done.status() == RunStatus.RUNNING || done.status() == RunStatus.AWAITING_APPROVAL) {
        done = service.getRun(held.runId(), false, 60); // the test's timeout bounds this
      }
      assertThat(done.status()).as(done.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(done.stdout()).contains(TinyWheels.greeting("tinypkg", "3.0"));

      // Built now (by an approved run): using it runs nothing the caller chose.
      assertThat(
              service.createSession("reuses", null, LimitRequest.DEFAULTS, null, pkgs).sessionId())
          .isEqualTo("reuses");
    }
  }
}
