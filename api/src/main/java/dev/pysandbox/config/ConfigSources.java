package dev.pysandbox.config;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.PysandboxConfig.Resolved;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * Where each setting's raw value comes from: a CLI flag, else a {@code PYSANDBOX_*} environment
 * variable, else the properties file, else the built-in default. The file is the one given, else
 * {@code $PYSANDBOX_CONFIG}, else {@code <data_dir>/config.properties} when it exists (so {@code
 * data_dir} is resolved first, from flags and environment only). Unknown keys are refused wherever
 * they appear, and so is {@code agent_api_key} (a key in a flag shows in the process list, one in
 * the file is easily copied or committed); what the values mean is {@link ConfigReader}'s.
 */
final class ConfigSources {
  /** The environment variable that holds the agent provider's API key, when a variable does. */
  static final String API_KEY_ENV = "PYSANDBOX_AGENT_API_KEY";

  private ConfigSources() {}

  /**
   * Every setting's raw value and its source.
   *
   * @throws PysandboxException {@code invalid_argument} for an unknown key or an unreadable file
   */
  static Map<ConfigSetting, Resolved> resolve(
      Map<String, String> flags, Map<String, String> env, Path configFile) {
    for (String key : flags.keySet()) {
      known(key, "as a flag");
    }
    Map<ConfigSetting, Resolved> values = new LinkedHashMap<>();
    Consumer<ConfigSetting> fromFlagsOrEnv =
        s -> {
          if (flags.containsKey(s.key())) {
            values.put(s, new Resolved(s, flags.get(s.key()), "flag"));
          } else if (env.containsKey(s.envName())) {
            values.put(s, new Resolved(s, env.get(s.envName()), "env " + s.envName()));
          }
        };
    fromFlagsOrEnv.accept(Setting.DATA_DIR);
    Path file = configFile;
    if (file == null && env.containsKey("PYSANDBOX_CONFIG")) {
      file = Path.of(env.get("PYSANDBOX_CONFIG"));
    }
    boolean explicitFile = file != null;
    if (file == null) {
      String dir =
          values.containsKey(Setting.DATA_DIR)
              ? values.get(Setting.DATA_DIR).value()
              : Setting.DATA_DIR.defaultValue();
      file = expandHome(dir).resolve("config.properties");
    }
    Properties props = new Properties();
    if (Files.isRegularFile(file)) {
      try (Reader r = Files.newBufferedReader(file)) {
        props.load(r);
      } catch (IOException | IllegalArgumentException e) {
        throw PysandboxException.invalid("cannot read config file " + file + ": " + e.getMessage());
      }
    } else if (explicitFile) {
      throw PysandboxException.invalid("config file " + file + " does not exist");
    }
    for (String key : props.stringPropertyNames()) {
      known(key, "in " + file);
    }
    for (ConfigSetting s : ConfigSetting.all()) {
      fromFlagsOrEnv.accept(s);
      if (!values.containsKey(s)) {
        String v = props.getProperty(s.key());
        values.put(
            s,
            v != null
                ? new Resolved(s, v.trim(), "file " + file)
                : new Resolved(s, s.defaultValue(), "default"));
      }
    }
    return values;
  }

  /** Refuses a key that names no setting, and the API key, which no flag or file may hold. */
  private static void known(String key, String where) {
    if (key.equals("agent_api_key")) {
      throw PysandboxException.invalid(
          "agent_api_key cannot be given "
              + where
              + ": the agent provider's API key comes only from the environment variable "
              + API_KEY_ENV
              + " or from a file named by agent_api_key_file");
    }
    if (ConfigSetting.byKey(key) == null) {
      String in = where.startsWith("in ") ? " " + where : "";
      throw PysandboxException.invalid(
          "unknown setting '"
              + key
              + "'"
              + in
              + " (known: "
              + String.join(", ", ConfigSetting.all().stream().map(ConfigSetting::key).toList())
              + ")");
    }
  }

  /** {@code ~} and {@code ~/...} under the user's home directory; anything else as it is. */
  static Path expandHome(String value) {
    if (value.equals("~") || value.startsWith("~/")) {
      return Path.of(System.getProperty("user.home") + value.substring(1));
    }
    return Path.of(value);
  }
}
