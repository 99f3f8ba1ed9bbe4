package dev.pysandbox.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Fast;
import org.junit.jupiter.api.Test;

/** Artifact's {@code skipped} field on the wire: absent (older records), null, present. */
@Fast
class ArtifactWireTest {
  private static final String BEFORE_SKIPPED =
      "{\"path\":\"a.csv\",\"size_bytes\":4,\"sha256\":\"ab\",\"media_type\":\"text/csv\","
          + "\"change\":\"created\"";

  @Test
  void skipped_absent_readsAsNull() throws Exception {
    Artifact a = Json.mapper().readValue(BEFORE_SKIPPED + "}", Artifact.class);
    assertThat(a).isEqualTo(new Artifact("a.csv", 4, "ab", "text/csv", ArtifactChange.CREATED));
    assertThat(a.skipped()).isNull();
  }

  @Test
  void skipped_null_readsAsNull_andIsWrittenAsNull() throws Exception {
    Artifact a = Json.mapper().readValue(BEFORE_SKIPPED + ",\"skipped\":null}", Artifact.class);
    assertThat(a.skipped()).isNull();
    JsonNode written = Json.mapper().readTree(Json.write(a));
    assertThat(written.has("skipped")).isTrue();
    assertThat(written.get("skipped").isNull()).isTrue();
  }

  @Test
  void skipped_present_roundTrips() throws Exception {
    Artifact a =
        new Artifact(
            "l", 0, null, "application/octet-stream", ArtifactChange.CREATED, "a symbolic link");
    String json = Json.write(a);
    assertThat(Json.mapper().readTree(json).get("skipped").asText()).isEqualTo("a symbolic link");
    assertThat(Json.mapper().readValue(json, Artifact.class)).isEqualTo(a);
  }
}
