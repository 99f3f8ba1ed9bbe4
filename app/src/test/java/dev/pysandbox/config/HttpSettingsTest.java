package dev.pysandbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP face's settings: defaults, validation, and no key only on loopback. */
@Fast
class HttpSettingsTest {
  @TempDir Path dir;

  private PysandboxConfig load(String... keyValues) {
    Map<String, String> flags = new HashMap<>();
    flags.put("data_dir", dir.toString());
    for (int i = 0; i < keyValues.length; i += 2) {
      flags.put(keyValues[i], keyValues[i + 1]);
    }
    return PysandboxConfig.load(flags, Map.of(), null);
  }

  @Test
  void defaults_loopbackWithKeysAndModestLimits() {
    PysandboxConfig c = load();
    assertThat(c.httpHost()).isEqualTo("127.0.0.1");
    assertThat(c.httpPort()).isEqualTo(8765);
    assertThat(c.httpAuthKeys()).isTrue();
    assertThat(c.allowedHosts()).isEmpty();
    assertThat(c.allowedOrigins()).isEmpty();
    assertThat(c.rateLimitPerSecond()).isEqualTo(100.0);
    assertThat(c.rateLimitBurst()).isEqualTo(1000);
    assertThat(c.shutdownGraceSeconds()).isEqualTo(10);
  }

  @Test
  void noKeys_areAllowedOnLoopbackOnly() {
    for (String loopback : List.of("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost")) {
      assertThat(load("http_host", loopback, "http_auth", "none").httpAuthKeys())
          .as(loopback)
          .isFalse();
    }
    for (String exposed : List.of("0.0.0.0", "::", "10.0.0.5", "example.com", "my-host")) {
      assertThatThrownBy(() -> load("http_host", exposed, "http_auth", "none"))
          .as(exposed)
          .hasMessageContaining("http_auth")
          .hasMessageContaining("loopback")
          .hasMessageContaining(exposed);
    }
    assertThat(load("http_host", "0.0.0.0").httpAuthKeys()).isTrue();
  }

  @Test
  void badValues_areRefusedNamingTheSetting() {
    assertThatThrownBy(() -> load("http_port", "70000")).hasMessageContaining("http_port");
    assertThatThrownBy(() -> load("http_auth", "maybe")).hasMessageContaining("keys, none");
    assertThatThrownBy(() -> load("http_host", "a b")).hasMessageContaining("http_host");
    assertThatThrownBy(() -> load("allowed_hosts", "ok.example,http://x"))
        .hasMessageContaining("allowed_hosts")
        .hasMessageContaining("http://x");
    assertThatThrownBy(() -> load("allowed_origins", "example.com"))
        .hasMessageContaining("allowed_origins");
    assertThatThrownBy(() -> load("allowed_origins", "https://a.example/path"))
        .hasMessageContaining("no path");
    assertThatThrownBy(() -> load("rate_limit_per_second", "-1"))
        .hasMessageContaining("rate_limit_per_second");
    assertThatThrownBy(() -> load("rate_limit_burst", "0"))
        .hasMessageContaining("rate_limit_burst");
    assertThatThrownBy(() -> load("shutdown_grace", "-1")).hasMessageContaining("shutdown_grace");
  }

  @Test
  void lists_areLowerCasedAndOriginsLoseATrailingSlash() {
    PysandboxConfig c =
        load(
            "allowed_hosts",
            "Api.Example.COM, 10.0.0.5:8765 ,[::1]:9000",
            "allowed_origins",
            "https://App.Example/, http://localhost:3000",
            "rate_limit_per_second",
            "0");
    assertThat(c.allowedHosts()).containsExactly("api.example.com", "10.0.0.5:8765", "[::1]:9000");
    assertThat(c.allowedOrigins()).containsExactly("https://app.example", "http://localhost:3000");
    assertThat(c.rateLimitPerSecond()).isZero();
  }
}
