package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Parsing {@code pysandbox://} URIs, and matching them to templates. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
@Fast
class ResourceUriTest {
  @Test
  void parse_namesWhatEachUriIs() {
    assertThat(ResourceUri.parse("pysandbox://runs/run_1"))
        .isEqualTo(new ResourceUri(ResourceUri.Kind.RUN, "run_1", null, null, -1));
    assertThat(ResourceUri.parse("pysandbox://runs/run_1/files/out/a%20b%25.txt"))
        .isEqualTo(new ResourceUri(ResourceUri.Kind.RUN_FILE, "run_1", null, "out/a b%.txt", -1));
    assertThat(ResourceUri.parse("pysandbox://sessions/s-1/files/%C3%A9t%C3%A9.csv"))
        .isEqualTo(new ResourceUri(ResourceUri.Kind.SESSION_FILE, null, "s-1", "été.csv", -1));
    assertThat(ResourceUri.parse("pysandbox://runs/run_1/displays/3").index()).isEqualTo(3);
    assertThat(ResourceUri.parse("pysandbox://runs/run_1/result").kind())
        .isEqualTo(ResourceUri.Kind.RUN_RESULT);
    assertThat(ResourceUri.parse("pysandbox://runs/run_1/other")).isNull();
    assertThat(ResourceUri.parse("pysandbox://sessions/s-1")).isNull();
    assertThat(ResourceUri.parse("file:///etc/passwd")).isNull();
    assertThat(ResourceUri.parse("pysandbox://runs/a+b/files/x")).as("not an id").isNull();
  }

  @Test
  void parse_aBrokenPercentOrNotUtf8_isABadPath() {
    assertThatThrownBy(() -> ResourceUri.parse("pysandbox://runs/r/files/a%2"))
        .isInstanceOf(ResourceUri.BadPath.class);
    assertThatThrownBy(() -> ResourceUri.parse("pysandbox://runs/r/files/%FF"))
        .isInstanceOf(ResourceUri.BadPath.class);
    assertThat(ResourceUri.decode("a+b")).isEqualTo("a+b");
  }

  @Test
  void templates_aReservedVariableSpansSegments_aPlainOneDoesNot() {
    UriTemplates files = new UriTemplates("pysandbox://runs/{run_id}/files/{+path}");
    assertThat(files.matches("pysandbox://runs/r1/files/out/deep/plot.png")).isTrue();
    assertThat(files.extractVariableValues("pysandbox://runs/r1/files/out/plot.png"))
        .isEqualTo(Map.of("run_id", "r1", "path", "out/plot.png"));
    assertThat(files.getVariableNames()).containsExactly("run_id", "path");
    UriTemplates run = new UriTemplates("pysandbox://runs/{run_id}");
    assertThat(run.matches("pysandbox://runs/r1")).isTrue();
    assertThat(run.matches("pysandbox://runs/r1/files/a")).isFalse();
    assertThat(new UriTemplates("pysandbox://fixed").matches("pysandbox://fixed")).isTrue();
  }
}
