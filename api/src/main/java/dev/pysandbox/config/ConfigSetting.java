package dev.pysandbox.config;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One configuration key, with its default and what it means: a constant of {@link Setting} (the
 * sandbox, the faces, storage …) or of {@link AgentSetting} (agent runs). Two enums so that neither
 * file grows past what one can read; everything that lists settings — the loader, {@code pysandbox
 * config}, {@link PysandboxConfig#describe()}, the README's table — goes through {@link #all()},
 * which lists both in a fixed order.
 */
public sealed interface ConfigSetting permits Setting, AgentSetting {

  /** The key in config files and {@code --set key=value}. */
  String key();

  /** The value when no flag, environment variable or file sets one; may be empty. */
  String defaultValue();

  /** What the setting does, one or two sentences for the README's table. */
  String doc();

  /** The environment variable that sets it, e.g. {@code PYSANDBOX_DATA_DIR}. */
  default String envName() {
    return "PYSANDBOX_" + key().toUpperCase(Locale.ROOT);
  }

  /** Every setting: {@link Setting}'s in their order, then {@link AgentSetting}'s. */
  static List<ConfigSetting> all() {
    List<ConfigSetting> all = new ArrayList<>(Arrays.asList(Setting.values()));
    all.addAll(Arrays.asList(AgentSetting.values()));
    return List.copyOf(all);
  }

  /** The setting with this key, or {@code null} when there is none. */
  static ConfigSetting byKey(String key) {
    for (ConfigSetting s : all()) {
      if (s.key().equals(key)) {
        return s;
      }
    }
    return null;
  }
}
