package dev.pysandbox.config;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.PysandboxConfig.Resolved;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads one setting's raw value as what it means (a number in a range, one of some words, an
 * absolute path, a URL …), or fails with {@code invalid_argument} naming the setting, its value,
 * where that came from and why it is refused. Knows nothing of how settings relate to each other:
 * that is {@link ConfigReader}'s.
 */
final class SettingValues {
  private final Map<ConfigSetting, Resolved> resolved;

  SettingValues(Map<ConfigSetting, Resolved> resolved) {
    this.resolved = resolved;
  }

  String raw(ConfigSetting s) {
    return resolved.get(s).value();
  }

  PysandboxException bad(ConfigSetting s, String why) {
    Resolved r = resolved.get(s);
    return PysandboxException.invalid(
        "setting "
            + s.key()
            + " = '"
            + r.value()
            + "' (from "
            + r.source()
            + ") is invalid: "
            + why);
  }

  /**
   * As {@link #bad}, without the value: for a setting whose refused value may hold a secret (a URL
   * with credentials or a key in its query).
   */
  PysandboxException badUnshown(ConfigSetting s, String why) {
    return PysandboxException.invalid(
        "setting "
            + s.key()
            + " (from "
            + resolved.get(s).source()
            + ") is invalid, its value not shown: "
            + why);
  }

  String string(ConfigSetting s) {
    String v = raw(s).trim();
    if (v.isEmpty()) {
      throw bad(s, "must not be empty");
    }
    return v;
  }

  Path path(ConfigSetting s, boolean mustBeAbsolute) {
    Path p = ConfigSources.expandHome(string(s));
    if (mustBeAbsolute && !p.isAbsolute()) {
      throw bad(s, "must be an absolute path");
    }
    return p.toAbsolutePath().normalize();
  }

  /** An existing directory by its real path, or {@code null} when the setting is empty. */
  Path directory(ConfigSetting s) {
    String v = raw(s).trim();
    if (v.isEmpty()) {
      return null;
    }
    Path p = ConfigSources.expandHome(v);
    if (!p.isAbsolute()) {
      throw bad(s, "must be an absolute path");
    }
    Path real;
    try {
      real = p.toRealPath();
    } catch (java.io.IOException e) {
      throw bad(s, "no such directory");
    }
    if (!Files.isDirectory(real)) {
      throw bad(s, "not a directory");
    }
    return real;
  }

  /** A uid range, or {@code null} for {@code off} (or nothing). */
  UidRange uidRange(ConfigSetting s) {
    String v = raw(s).trim();
    if (v.isEmpty() || v.equalsIgnoreCase("off") || v.equalsIgnoreCase("none")) {
      return null;
    }
    try {
      return UidRange.parse(v);
    } catch (IllegalArgumentException e) {
      throw bad(s, e.getMessage());
    }
  }

  int integer(ConfigSetting s, int min, int max) {
    int v;
    try {
      v = Integer.parseInt(raw(s).trim().replace("_", ""));
    } catch (NumberFormatException e) {
      throw bad(s, "not a whole number");
    }
    if (v < min || v > max) {
      throw bad(s, "must be between " + min + " and " + max);
    }
    return v;
  }

  String oneOf(ConfigSetting s, String... allowed) {
    String v = string(s);
    if (!Arrays.asList(allowed).contains(v)) {
      throw bad(s, "must be one of " + String.join(", ", allowed));
    }
    return v;
  }

  double decimal(ConfigSetting s, double min, double max) {
    double v;
    try {
      v = Double.parseDouble(raw(s).trim());
    } catch (NumberFormatException e) {
      throw bad(s, "not a number");
    }
    if (!(v >= min && v <= max)) {
      throw bad(s, "must be between " + min + " and " + max);
    }
    return v;
  }

  boolean bool(ConfigSetting s) {
    return switch (raw(s).trim().toLowerCase(Locale.ROOT)) {
      case "true", "yes", "1", "on" -> true;
      case "false", "no", "0", "off" -> false;
      default -> throw bad(s, "must be true or false");
    };
  }

  /** The comma-separated parts, trimmed, blanks dropped. */
  List<String> list(ConfigSetting s) {
    List<String> out = new ArrayList<>();
    for (String part : raw(s).split(",")) {
      if (!part.isBlank()) {
        out.add(part.trim());
      }
    }
    return List.copyOf(out);
  }

  /** As {@link #list}, lower-cased. */
  List<String> lowerCaseList(ConfigSetting s) {
    return list(s).stream().map(v -> v.toLowerCase(Locale.ROOT)).toList();
  }

  /** An index URL: absolute http or https, a host, no credentials, no fragment. */
  URI indexUrl(ConfigSetting s, String value) {
    URI u;
    try {
      u = new URI(value);
    } catch (URISyntaxException e) {
      throw bad(s, "'" + value + "' is not a URL");
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || u.getHost() == null) {
      throw bad(s, "'" + value + "' is not an http or https URL with a host");
    }
    if (u.getRawUserInfo() != null) {
      throw bad(
          s,
          "'"
              + value
              + "' has credentials in it: the build sandbox would see them (use an index that"
              + " needs none, or a wheelhouse in find_links)");
    }
    if (u.getRawFragment() != null || u.getRawQuery() != null) {
      throw bad(s, "'" + value + "' has a query or fragment");
    }
    return u;
  }

  /**
   * The configured docker engine, checked here; with none configured, {@code DOCKER_HOST} or
   * Docker's default, which the docker backend checks when it is used (a {@code tcp://} DOCKER_HOST
   * meant for other tools must not stop a server that uses bwrap).
   */
  String dockerHost(ConfigSetting s) {
    String configured = raw(s).trim();
    if (configured.isEmpty()) {
      String env = System.getenv("DOCKER_HOST");
      return env == null || env.isBlank() ? "unix:///var/run/docker.sock" : env.trim();
    }
    if (!PysandboxConfig.localEngine(configured)) {
      throw bad(
          s,
          "'"
              + configured
              + "': the docker backend needs an engine on this host (its containers bind host"
              + " directories), as unix:///path/to/socket");
    }
    return configured;
  }
}
