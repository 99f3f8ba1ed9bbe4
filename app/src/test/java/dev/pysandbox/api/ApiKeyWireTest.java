package dev.pysandbox.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** API key values as the CLI's --json (and later the HTTP face) write them. */
@Fast
class ApiKeyWireTest {
  @Test
  void keyInfo_hasSnakeCaseNames_andKeepsNulls() {
    ApiKeyInfo info =
        new ApiKeyInfo("key_0123456789ab", "acme", null, "2026-03-01T10:00:00Z", null, null);
    Map<String, Object> json = Json.toMap(info);
    assertThat(json)
        .containsOnlyKeys(
            "key_id", "tenant", "label", "created_at", "last_used_at", "revoked_at", "role")
        .containsEntry("key_id", "key_0123456789ab")
        .containsEntry("last_used_at", null);
    assertThat(Json.mapper().convertValue(json, ApiKeyInfo.class)).isEqualTo(info);
  }

  @Test
  void createdKey_doesNotShowTheKeyInItsText() {
    String key = "psk_" + "a".repeat(43);
    CreatedApiKey created =
        new CreatedApiKey(
            new ApiKeyInfo("key_0123456789ab", "acme", null, "2026-03-01T10:00:00Z", null, null),
            key);
    assertThat(created.toString()).contains("key_0123456789ab").doesNotContain(key);
  }
}
