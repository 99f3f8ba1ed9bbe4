package dev.pysandbox.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a {@code tiers_file}: a JSON object from tier name to definition, e.g.
 *
 * <pre>
 * {"data_science": {"limits": {"memory_limit_mb": 3072}},
 *  "research": {"description": "Reads the shared data sets", "mounts": ["datasets"],
 *               "imports": {"deny": ["socket", "ssl"]}, "limits": {"cpu_limit": 2}}}
 * </pre>
 *
 * A definition names only what it changes: every field left out keeps the shipped tier's value (a
 * new tier starts from the shipped {@code basic}). Fields: {@code description}; {@code network}
 * (only {@code none} today); {@code mounts} (names from {@code fs_mounts}, or {@code "*"} for all);
 * {@code imports} ({@code deny}: modules, each with its submodules; {@code allow}: the only
 * top-level modules user code may import, or {@code null}); {@code limits} ({@code
 * memory_limit_mb}, {@code pids_limit}, {@code cpu_limit}, {@code disk_quota_mb}; above the
 * server's maximum clamped with a warning); {@code timeout_seconds} (the timeout of a run in the
 * tier that names none, instead of {@code timeout_default}; above {@code timeout_max} clamped with
 * a warning). Anything else is an error naming the tier and the field.
 */
final class TiersFile {
  private static final ObjectMapper JSON =
      JsonMapper.builder().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).build();
  private static final Pattern MODULE =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,99}(\\.[A-Za-z_][A-Za-z0-9_]{0,99}){0,9}");
  private static final Set<String> FIELDS =
      Set.of("description", "network", "mounts", "imports", "limits", "timeout_seconds");
  private static final Set<String> LIMITS =
      Set.of("memory_limit_mb", "pids_limit", "cpu_limit", "disk_quota_mb");
  private static final Set<String> IMPORTS = Set.of("deny", "allow");

  private TiersFile() {}

  /**
   * @param shipped the shipped tiers (changed by the file, never modified)
   * @param timeoutMax the server's {@code timeout_max}, which bounds a tier's {@code
   *     timeout_seconds}
   * @return every tier: the shipped ones (as the file changes them), then the file's new ones
   * @throws IllegalArgumentException naming the tier and the field that is wrong
   */
  static Map<String, Tier> apply(
      Path file,
      Map<String, Tier> shipped,
      Map<String, Path> mounts,
      Limits max,
      int timeoutMax,
      List<String> warn) {
    JsonNode root;
    try {
      root = JSON.readTree(Files.readString(file));
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read it as JSON: " + e.getMessage());
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException(
          "expected a JSON object from tier name to definition, e.g. {\"research\": {\"mounts\":"
              + " [\"datasets\"]}}");
    }
    Map<String, Tier> out = new LinkedHashMap<>(shipped);
    for (Map.Entry<String, JsonNode> e : root.properties()) {
      String name = e.getKey();
      if (!Ids.PATTERN.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "tier name '" + name + "' is invalid: use 1-64 letters, digits, '_' and '-'");
      }
      Tier base = shipped.getOrDefault(name, shipped.get(TierCatalog.BASIC));
      out.put(name, new Definition(name, e.getValue(), mounts, max, timeoutMax, warn).over(base));
    }
    return out;
  }

  /** One tier's entry, read field by field over the tier it changes. */
  private record Definition(
      String name,
      JsonNode node,
      Map<String, Path> mounts,
      Limits max,
      int timeoutMax,
      List<String> warn) {
    Tier over(Tier base) {
      requireObject(
          node,
          "",
          "must be a JSON object",
          FIELDS,
          "is not a field of a tier (fields: " + sorted(FIELDS) + ")");
      String description = base.description();
      if (node.has("description")) {
        JsonNode d = node.get("description");
        if (!d.isTextual() || d.asText().length() > 500) {
          throw bad("description", "must be a string of at most 500 characters");
        }
        description = d.asText();
      }
      String network = base.network();
      if (node.has("network")) {
        JsonNode n = node.get("network");
        if (!n.isTextual()) {
          throw bad("network", "must be a string");
        }
        if (!Tier.NETWORK_NONE.equals(n.asText()) && !Tier.NETWORK_EGRESS.equals(n.asText())) {
          throw bad(
              "network",
              "'"
                  + n.asText()
                  + "' is not known: 'none' (no network) or 'egress' (through the server's egress"
                  + " proxy, to network_allow)");
        }
        network = n.asText();
      }
      Map<String, Path> chosen = node.has("mounts") ? mounts(node.get("mounts")) : base.mounts();
      List<String> deny = base.importDeny();
      List<String> allow = base.importAllow();
      if (node.has("imports")) {
        JsonNode i = node.get("imports");
        requireObject(
            i,
            "imports",
            "must be an object with deny and/or allow",
            IMPORTS,
            "is not known (fields: allow, deny)");
        if (i.has("deny")) {
          deny = modules("imports.deny", i.get("deny"));
        }
        if (i.has("allow")) {
          allow = i.get("allow").isNull() ? null : modules("imports.allow", i.get("allow"));
          if (allow != null && allow.stream().anyMatch(m -> m.contains("."))) {
            throw bad("imports.allow", "names top-level modules only (no '.')");
          }
        }
      }
      Limits limits =
          node.has("limits") ? limits(node.get("limits"), base.limits()) : base.limits();
      Integer timeout = base.timeoutSeconds();
      if (node.has("timeout_seconds")) {
        JsonNode t = node.get("timeout_seconds");
        if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 1) {
          throw bad("timeout_seconds", "must be a whole number of seconds, at least 1, got " + t);
        }
        timeout = (int) clamp("timeout_seconds", t.asInt(), timeoutMax);
      }
      return new Tier(name, description, network, chosen, deny, allow, limits, null, timeout);
    }

    private Map<String, Path> mounts(JsonNode list) {
      if (!list.isArray()) {
        throw bad("mounts", "must be an array of fs_mounts names (or [\"*\"] for all of them)");
      }
      Map<String, Path> out = new LinkedHashMap<>();
      for (int i = 0; i < list.size(); i++) {
        JsonNode n = list.get(i);
        if (!n.isTextual()) {
          throw bad("mounts[" + i + "]", "must be a string");
        }
        String m = n.asText();
        if (m.equals("*")) {
          out.putAll(mounts);
        } else if (mounts.containsKey(m)) {
          out.put(m, mounts.get(m));
        } else {
          throw bad(
              "mounts[" + i + "]",
              "'"
                  + m
                  + "' is not a name in fs_mounts"
                  + (mounts.isEmpty()
                      ? " (fs_mounts is empty)"
                      : " (names: " + String.join(", ", mounts.keySet()) + ")"));
        }
      }
      return out;
    }

    private List<String> modules(String field, JsonNode list) {
      if (!list.isArray()) {
        throw bad(field, "must be an array of module names");
      }
      List<String> out = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        JsonNode n = list.get(i);
        if (!n.isTextual() || !MODULE.matcher(n.asText()).matches()) {
          throw bad(field + "[" + i + "]", n + " is not a module name");
        }
        if (!out.contains(n.asText())) {
          out.add(n.asText());
        }
      }
      return out;
    }

    private Limits limits(JsonNode l, Limits base) {
      requireObject(
          l,
          "limits",
          "must be an object",
          LIMITS,
          "is not a limit (limits: " + sorted(LIMITS) + ")");
      long memory =
          mebibytes(
              l,
              "memory_limit_mb",
              LimitRequest.MIN_MEMORY_MB,
              max.memoryBytes(),
              base.memoryBytes());
      int pids =
          l.has("pids_limit")
              ? (int) whole(l, "pids_limit", LimitRequest.MIN_PIDS, max.pids())
              : base.pids();
      double cpus = base.cpus();
      if (l.has("cpu_limit")) {
        JsonNode c = l.get("cpu_limit");
        if (!c.isNumber() || !(c.asDouble() >= LimitRequest.MIN_CPUS)) {
          throw bad("limits.cpu_limit", "must be a number of at least " + LimitRequest.MIN_CPUS);
        }
        cpus = clamp("limits.cpu_limit", c.asDouble(), max.cpus());
      }
      long disk =
          mebibytes(
              l,
              "disk_quota_mb",
              LimitRequest.MIN_DISK_QUOTA_MB,
              max.diskBytes(),
              base.diskBytes());
      return new Limits(memory, pids, cpus, disk, base.tmpBytes());
    }

    /** A limit the file gives in MiB, in bytes; {@code baseBytes} when the file leaves it out. */
    private long mebibytes(JsonNode l, String key, long min, long maxBytes, long baseBytes) {
      return l.has(key) ? whole(l, key, min, maxBytes / Limits.MIB) * Limits.MIB : baseBytes;
    }

    private long whole(JsonNode l, String key, long min, long maximum) {
      JsonNode v = l.get(key);
      if (!v.canConvertToLong() || !v.isIntegralNumber() || v.asLong() < min) {
        throw bad("limits." + key, "must be a whole number of at least " + min + ", got " + v);
      }
      return (long) clamp("limits." + key, v.asLong(), maximum);
    }

    private double clamp(String field, double value, double maximum) {
      if (value > maximum) {
        warn.add(
            "tiers_file: tier '"
                + name
                + "': "
                + field
                + " "
                + trim(value)
                + " is above the server's maximum "
                + trim(maximum)
                + "; using "
                + trim(maximum));
        return maximum;
      }
      return value;
    }

    private static String trim(double v) {
      return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    /**
     * Refuses {@code node} unless it is an object all of whose fields are {@code known}: {@code
     * notObject} names the first failure, {@code unknown} the second (at {@code field.name}).
     */
    private void requireObject(
        JsonNode node, String field, String notObject, Set<String> known, String unknown) {
      if (!node.isObject()) {
        throw bad(field, notObject);
      }
      node.fieldNames()
          .forEachRemaining(
              f -> {
                if (!known.contains(f)) {
                  throw bad(field.isEmpty() ? f : field + "." + f, unknown);
                }
              });
    }

    private IllegalArgumentException bad(String field, String why) {
      return new IllegalArgumentException(
          "tier '" + name + "'" + (field.isEmpty() ? "" : ": " + field) + " " + why);
    }
  }

  private static String sorted(Set<String> names) {
    return String.join(", ", new java.util.TreeSet<>(names));
  }
}
