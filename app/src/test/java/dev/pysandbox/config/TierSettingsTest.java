package dev.pysandbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** tier_default, tiers_allowed, fs_mounts and tiers_file: what they build and what they refuse. */
@Fast
class TierSettingsTest {
  @TempDir Path dir;

  private PysandboxConfig load(String... keyValues) {
    Map<String, String> flags = new HashMap<>();
    flags.put("data_dir", dir.resolve("data").toString());
    for (int i = 0; i < keyValues.length; i += 2) {
      flags.put(keyValues[i], keyValues[i + 1]);
    }
    return PysandboxConfig.load(flags, Map.of(), null);
  }

  private Path tiersFile(String json) throws Exception {
    return Files.writeString(dir.resolve("tiers.json"), json);
  }

  @Test
  void defaults_shipFourTiers_basicByDefault_networkNotAvailable() {
    TierCatalog t = load().tiers();
    assertThat(t.names()).containsExactly("basic", "data_science", "filesystem", "network");
    assertThat(t.defaultTier().name()).isEqualTo("basic");
    assertThat(t.allowed()).containsExactly("basic", "data_science", "filesystem");
    assertThat(t.get("basic").importDeny()).contains("socket", "ctypes", "urllib.request");
    assertThat(t.get("basic").importAllow()).isNull();
    assertThat(t.get("basic").mounts()).isEmpty();
    assertThat(t.get("basic").limits()).isEqualTo(load().defaultLimits());
    assertThat(t.get("data_science").limits().describe())
        .containsEntry("memory_limit_mb", 2048L)
        .containsEntry("pids_limit", 256)
        .containsEntry("cpu_limit", 2.0);
    assertThat(t.get("network").available()).isTrue();
    assertThat(t.get("network").network()).isEqualTo("egress");
    assertThat(t.get("network").importDeny()).contains("ctypes").doesNotContain("socket");
    assertThat(t.describe(load().maxLimits()))
        .containsEntry("default", "basic")
        .containsKeys("allowed", "maxima", "tiers");
  }

  @Test
  void dataScience_neverBelowTheDefaults_norAboveTheMaxima() {
    TierCatalog t =
        load("memory_limit_mb", "3000", "memory_limit_max_mb", "3000", "cpu_limit_max", "1.5")
            .tiers();
    Limits ds = t.get("data_science").limits();
    assertThat(ds.memoryBytes()).isEqualTo(3000 * Limits.MIB);
    assertThat(ds.cpus()).isEqualTo(1.5);
  }

  @Test
  void fsMounts_areBoundByRealPath_andTheFilesystemTierShowsThemAll() throws Exception {
    Path real = Files.createDirectories(dir.resolve("shared/sets"));
    Path link = Files.createSymbolicLink(dir.resolve("sets-link"), real);
    TierCatalog t = load("fs_mounts", "sets=" + link + ", docs=" + dir.resolve("shared")).tiers();
    assertThat(t.hostMounts())
        .containsEntry("sets", real.toRealPath())
        .containsEntry("docs", dir.resolve("shared").toRealPath());
    assertThat(t.get("filesystem").mounts()).isEqualTo(t.hostMounts());
    assertThat(t.get("basic").mounts()).isEmpty();
  }

  @Test
  void fsMounts_thatAreMissingOrUnsafe_areConfigurationErrorsNamingTheSetting() throws Exception {
    Files.createDirectories(dir.resolve("data/inner"));
    Path file = Files.writeString(dir.resolve("plain.txt"), "x");
    Map<String, String> cases = new java.util.LinkedHashMap<>();
    cases.put("gone=" + dir.resolve("nope"), "no such directory");
    cases.put("rel=some/dir", "absolute");
    cases.put("file=" + file, "not a directory");
    cases.put("inner=" + dir.resolve("data/inner"), "lies inside the data directory");
    cases.put("up=" + dir, "contains the data directory");
    cases.put("root=/", "whole host");
    cases.put("proc=/proc/self", "/proc");
    cases.put("bad name=" + dir.resolve("data"), "mount name");
    cases.put("a=/usr/share,a=/etc", "given twice");
    cases.put("justapath", "not name=/absolute/directory");
    cases.forEach(
        (value, why) ->
            assertThatThrownBy(() -> load("fs_mounts", value))
                .as(value)
                .isInstanceOf(PysandboxException.class)
                .hasMessageContaining("fs_mounts")
                .hasMessageContaining(why));
  }

  @Test
  void tiersFile_changesAShippedTier_andAddsOnesThatStartFromBasic() throws Exception {
    Files.createDirectories(dir.resolve("sets"));
    Path f =
        tiersFile(
            """
            {"data_science": {"limits": {"memory_limit_mb": 3072}},
             "research": {"description": "Reads the shared sets", "mounts": ["sets"],
                          "imports": {"deny": ["socket", "ssl"]},
                          "limits": {"cpu_limit": 2, "memory_limit_mb": 99999}},
             "tight": {"imports": {"allow": ["math", "json"]}}}
            """);
    PysandboxConfig c =
        load(
            "tiers_file",
            f.toString(),
            "fs_mounts",
            "sets=" + dir.resolve("sets"),
            "tiers_allowed",
            "basic,research,tight");
    TierCatalog t = c.tiers();
    assertThat(t.names())
        .containsExactly("basic", "data_science", "filesystem", "network", "research", "tight");
    assertThat(t.get("data_science").limits().memoryBytes()).isEqualTo(3072 * Limits.MIB);
    assertThat(t.get("data_science").limits().pids())
        .as("kept from the shipped tier")
        .isEqualTo(256);
    Tier r = t.get("research");
    assertThat(r.description()).isEqualTo("Reads the shared sets");
    assertThat(r.mounts()).containsOnlyKeys("sets");
    assertThat(r.importDeny()).containsExactly("socket", "ssl");
    assertThat(r.limits().cpus()).isEqualTo(2.0);
    assertThat(r.limits().memoryBytes()).isEqualTo(c.maxLimits().memoryBytes());
    assertThat(c.warnings())
        .anySatisfy(
            w -> assertThat(w).contains("research").contains("memory_limit_mb").contains("4096"));
    assertThat(t.get("tight").importAllow()).containsExactly("math", "json");
    assertThat(t.get("tight").importDeny()).isEqualTo(TierCatalog.SHIPPED_DENY);
    assertThat(t.allowed()).containsExactly("basic", "research", "tight");
  }

  @Test
  void tiersFile_withABadField_isRefusedNamingTheTierAndTheField() throws Exception {
    Map<String, String> cases = new java.util.LinkedHashMap<>();
    cases.put("{\"x\": {\"network\": \"wifi\"}}", "tier 'x': network 'wifi' is not known");
    cases.put(
        "{\"x\": {\"mounts\": [\"nowhere\"]}}", "tier 'x': mounts[0] 'nowhere' is not a name");
    cases.put("{\"x\": {\"color\": 1}}", "tier 'x': color is not a field of a tier");
    cases.put("{\"x\": {\"limits\": {\"ram\": 1}}}", "tier 'x': limits.ram is not a limit");
    cases.put(
        "{\"x\": {\"limits\": {\"pids_limit\": 1}}}", "limits.pids_limit must be a whole number");
    cases.put(
        "{\"x\": {\"imports\": {\"deny\": [\"os;rm\"]}}}", "imports.deny[0] \"os;rm\" is not a");
    cases.put("{\"x\": {\"imports\": {\"allow\": [\"os.path\"]}}}", "top-level modules only");
    cases.put("{\"bad name\": {}}", "tier name 'bad name' is invalid");
    cases.put("{\"x\": {}, \"x\": {}}", "Duplicate field 'x'");
    cases.put("[1]", "expected a JSON object");
    cases.put("{not json", "cannot read it as JSON");
    for (Map.Entry<String, String> e : cases.entrySet()) {
      Path f = tiersFile(e.getKey());
      assertThatThrownBy(() -> load("tiers_file", f.toString()))
          .as(e.getKey())
          .isInstanceOf(PysandboxException.class)
          .hasMessageContaining("tiers_file")
          .hasMessageContaining(e.getValue());
    }
    assertThatThrownBy(() -> load("tiers_file", dir.resolve("none.json").toString()))
        .hasMessageContaining("no such file");
  }

  @Test
  void tiersFile_timeoutSeconds_isTheTiersDefaultTimeout_boundedByTimeoutMax() throws Exception {
    Path f =
        tiersFile(
            "{\"data_science\": {\"timeout_seconds\": 600}, \"long\": {\"timeout_seconds\":"
                + " 99999}}");
    PysandboxConfig c = load("tiers_file", f.toString(), "timeout_max", "1800");

    assertThat(c.tiers().get("data_science").timeoutSeconds()).isEqualTo(600);
    assertThat(c.tiers().get("long").timeoutSeconds()).isEqualTo(1800);
    assertThat(c.tiers().get("basic").timeoutSeconds()).isNull();
    assertThat(c.warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains(
                        "tier 'long'", "timeout_seconds 99999", "maximum 1800", "using 1800"));
    assertThat(c.tiers().get("data_science").describe()).containsEntry("timeout_seconds", 600);
    for (String bad : new String[] {"0", "1.5", "\"60\"", "null"}) {
      Path wrong = tiersFile("{\"x\": {\"timeout_seconds\": " + bad + "}}");
      assertThatThrownBy(() -> load("tiers_file", wrong.toString()))
          .as(bad)
          .hasMessageContaining("tier 'x': timeout_seconds must be a whole number of seconds");
    }
  }

  @Test
  void tierChoice_unknownOrNotAllowed_isAConfigurationError_networkIsAllowedWhenNamed() {
    assertThatThrownBy(() -> load("tiers_allowed", "basic,gpu"))
        .hasMessageContaining("tiers_allowed")
        .hasMessageContaining("unknown tier 'gpu'")
        .hasMessageContaining("known: basic, data_science, filesystem, network");
    assertThatThrownBy(() -> load("tier_default", "data_science", "tiers_allowed", "basic"))
        .hasMessageContaining("tier_default")
        .hasMessageContaining("not in tiers_allowed");
    // The network tier is available since the egress proxy: allowed and default when asked for.
    assertThat(
            load("tier_default", "network", "tiers_allowed", "basic,network")
                .tiers()
                .defaultTier()
                .name())
        .isEqualTo("network");
    PysandboxConfig c = load("tiers_allowed", "basic,network");
    assertThat(c.tiers().allowed()).containsExactly("basic", "network");
    assertThatThrownBy(() -> load("tiers_allowed", "network"))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("tier 'basic' is not in tiers_allowed (network)");
    PysandboxConfig ds = load("tier_default", "data_science");
    assertThat(ds.tiers().defaultTier().name()).isEqualTo("data_science");
  }
}
