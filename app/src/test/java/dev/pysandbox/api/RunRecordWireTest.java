package dev.pysandbox.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Fast;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a remote client receives of a run: wire names for domain values, no host path. */
@Fast
class RunRecordWireTest {
  @Test
  void hostPaths_neverReachTheWire_domainValuesUseTheirWireNames() throws Exception {
    RunRecord r =
        RunRecord.builder()
            .runId("run_1")
            .status(RunStatus.TIMED_OUT)
            .killReason(KillReason.TIMEOUT)
            .artifactsDir("/root/.pysandbox/runs/run_1/files")
            .interpreter("3.11.2")
            .artifacts(List.of(new Artifact("a", 1, "ab", "text/plain", ArtifactChange.MODIFIED)))
            .riskFindings(
                List.of(
                    new RiskFinding(
                        "subprocess", "high", "starts a process", 2, 1, "import subprocess")))
            .build();
    String json = Json.write(r);
    assertThat(json).doesNotContain("/root/.pysandbox").doesNotContain("artifacts_dir");
    JsonNode n = Json.mapper().readTree(json);
    assertThat(n.get("status").asText()).isEqualTo("timed_out");
    assertThat(n.get("kill_reason").asText()).isEqualTo("timeout");
    assertThat(n.get("artifacts").get(0).get("change").asText()).isEqualTo("modified");
    assertThat(n.get("risk_findings").get(0).get("rule").asText()).isEqualTo("subprocess");
    assertThat(Json.mapper().readValue(json, RunRecord.class).killReason())
        .isEqualTo(KillReason.TIMEOUT);
  }

  @Test
  void tier_whenPresentNullOrAbsent_readsBackAsSent() throws Exception {
    String json = Json.write(RunRecord.builder().runId("run_1").tier("data_science").build());
    assertThat(Json.mapper().readTree(json).get("tier").asText()).isEqualTo("data_science");
    assertThat(Json.mapper().readValue(json, RunRecord.class).tier()).isEqualTo("data_science");
    String none = Json.write(RunRecord.builder().runId("run_1").build());
    assertThat(Json.mapper().readTree(none).get("tier").isNull()).isTrue();
    assertThat(Json.mapper().readValue(none, RunRecord.class).tier()).isNull();
    assertThat(Json.mapper().readValue("{\"run_id\":\"run_1\"}", RunRecord.class).tier())
        .as("a record from before tiers")
        .isNull();
    SessionInfo s =
        Json.mapper().readValue("{\"session_id\":\"s1\",\"tier\":\"basic\"}", SessionInfo.class);
    assertThat(s.tier()).isEqualTo("basic");
    assertThat(Json.mapper().readValue("{\"session_id\":\"s1\"}", SessionInfo.class).tier())
        .isNull();
  }

  @Test
  void unknownWireNames_areRefusedNamingTheKnownOnes() {
    assertThatThrownBy(() -> WireEnum.parse(KillReason.class, "oom"))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("unknown kill reason 'oom'")
        .hasMessageContaining("memory_limit");
    assertThat(WireEnum.parse(SessionState.class, "idle")).isEqualTo(SessionState.IDLE);
    assertThat(ArtifactChange.DELETED.toString()).isEqualTo("deleted");
  }
}
