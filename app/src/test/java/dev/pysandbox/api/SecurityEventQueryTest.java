package dev.pysandbox.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

@Fast
class SecurityEventQueryTest {
  private static final Instant NOW = Instant.parse("2026-11-25T15:00:00Z");

  private static SecurityEventQuery since(String since) {
    return new SecurityEventQuery(since, null, null, 100, null);
  }

  @Test
  void since_isAnAgeOrAnInstant_andOneRuleReadsBoth() {
    assertThat(since("90s").sinceAt(NOW)).isEqualTo("2026-11-25T14:58:30Z");
    assertThat(since("10m").sinceAt(NOW)).isEqualTo("2026-11-25T14:50:00Z");
    assertThat(since("2h").sinceAt(NOW)).isEqualTo("2026-11-25T13:00:00Z");
    assertThat(since("7d").sinceAt(NOW)).isEqualTo("2026-11-18T15:00:00Z");
    assertThat(since("PT1H30M").sinceAt(NOW)).isEqualTo("2026-11-25T13:30:00Z");
    assertThat(since("2026-11-01T00:00:00Z").sinceAt(NOW)).isEqualTo("2026-11-01T00:00:00Z");
    assertThat(since(null).sinceAt(NOW)).isNull();
    assertThat(since("999999999d").sinceAt(NOW)).as("before 1970 is everything").isNull();
  }

  @Test
  void since_thatIsNeither_isInvalid_namingBothForms() {
    for (String bad : new String[] {"yesterday", "10", "-5m", "PT-1H", "10 m", "", "1w"}) {
      assertThatThrownBy(() -> since(bad))
          .as(bad)
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("since")
          .hasMessageContaining("an age (30s, 10m, 2h, 7d, PT1H30M)")
          .hasMessageContaining("an instant");
    }
  }

  @Test
  void kind_unknown_isInvalid_namingEveryKnownKind() {
    assertThat(WireEnum.parse(SecurityEvent.Kind.class, "limit_stopped_run"))
        .isEqualTo(SecurityEvent.Kind.LIMIT_STOPPED_RUN);
    assertThatThrownBy(() -> WireEnum.parse(SecurityEvent.Kind.class, "oom"))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("unknown kind 'oom'")
        .hasMessageContaining(
            "approval_requested, approval_approved, approval_denied, approval_expired,"
                + " limit_stopped_run, import_denied, network_denied, network_allowed,"
                + " sandbox_died");
  }

  @Test
  void limitSessionAndCursor_areChecked() {
    assertThatThrownBy(() -> new SecurityEventQuery(null, null, null, 0, null))
        .hasMessageContaining("limit must be 1..1000");
    assertThatThrownBy(() -> new SecurityEventQuery(null, null, null, 1001, null))
        .hasMessageContaining("limit must be 1..1000");
    assertThatThrownBy(() -> new SecurityEventQuery(null, null, "../x", 10, null))
        .hasMessageContaining("session_id");
    assertThatThrownBy(() -> new SecurityEventQuery(null, null, null, 10, "run_1"))
        .hasMessageContaining("cursor 'run_1' is not one");
    assertThat(new SecurityEventQuery(null, null, "s-1", 1000, "evt_0123456789abcdef").limit())
        .isEqualTo(1000);
  }

  @Test
  void event_detail_keepsItsOrder_andLeavesOutNullValues() {
    Map<String, Object> detail = new java.util.LinkedHashMap<>();
    detail.put("limit", "timeout");
    detail.put("message", null);
    detail.put("limits", Map.of("pids_limit", 128));
    SecurityEvent e =
        new SecurityEvent(null, "limit_stopped_run", "local", null, null, null, detail);
    assertThat(e.detail().keySet()).containsExactly("limit", "limits");
    assertThat(new SecurityEvent(null, "x", null, null, null, null, null).detail()).isEmpty();
    Map<String, Object> json = Json.toMap(e);
    assertThat(json).doesNotContainKey("tenant").containsKeys("event_id", "kind", "at", "detail");
    assertThat(new HashMap<>(json)).containsEntry("kind", "limit_stopped_run");
  }
}
