package dev.pysandbox.core.requests;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.config.Tier;
import dev.pysandbox.config.TierCatalog;
import dev.pysandbox.packages.Requirements;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * The core's share of checking what a caller sends, before anything is created: the rules that
 * depend on the server's configuration (code size, timeout and limit maxima) and those on the
 * service's bare arguments, and which tier a caller may have. Rules a request value can check by
 * itself live in that value (the api records, {@link dev.pysandbox.api.Ids}); see DESIGN.md,
 * "Operations are declared once".
 */
public final class RequestValidator {
  private final PysandboxConfig config;

  public RequestValidator(PysandboxConfig config) {
    this.config = config;
  }

  /**
   * Also checks the request's tier ({@link #tier}).
   *
   * @return the timeout to apply, in seconds: the call's, else that of the tier it names (or the
   *     default tier), else {@code timeout_default}
   */
  public int validate(ExecutionRequest req) {
    return validate(req, null);
  }

  /**
   * As {@link #validate(ExecutionRequest)}, for a run whose tier is {@code runsIn} (its session's,
   * which the call need not name), or the tier the call names when null.
   */
  public int validate(ExecutionRequest req, Tier runsIn) {
    if (req == null) {
      throw PysandboxException.invalid("no request");
    }
    // The packages' specs are checked here, not by the request value: api sits below packages.
    Requirements.parse(req.packages());
    Tier named = tier(req.tier());
    int bytes = req.code().getBytes(StandardCharsets.UTF_8).length;
    if (bytes > config.codeMaxBytes()) {
      throw new PysandboxException(
          ErrorCode.CODE_TOO_LARGE,
          "code is " + bytes + " bytes (UTF-8); the limit is " + config.codeMaxBytes() + " bytes");
    }
    if (req.timeoutSeconds() == null) {
      Tier t = runsIn != null ? runsIn : named;
      // A tier's timeout_seconds is within timeout_max (TiersFile clamps it).
      return t.timeoutSeconds() != null ? t.timeoutSeconds() : config.timeoutDefaultSeconds();
    }
    int t = req.timeoutSeconds();
    if (t < 1 || t > config.timeoutMaxSeconds()) {
      throw PysandboxException.invalid(
          "timeout_seconds must be between 1 and " + config.timeoutMaxSeconds() + ", got " + t);
    }
    return t;
  }

  /**
   * The tier a caller asked for.
   *
   * @param requested a tier's name, or {@code null} for the server's default
   * @throws PysandboxException {@code invalid_argument} for a tier the server does not know (naming
   *     those it knows); {@code forbidden} for one it cannot provide yet (the network tier) or does
   *     not allow ({@code tiers_allowed})
   */
  public Tier tier(String requested) {
    TierCatalog tiers = config.tiers();
    if (requested == null) {
      return tiers.defaultTier();
    }
    Tier t = tiers.get(requested);
    if (t == null) {
      throw PysandboxException.invalid(
          "unknown tier "
              + PysandboxException.quote(requested)
              + "; the server knows "
              + String.join(", ", tiers.names())
              + " and allows "
              + String.join(", ", tiers.allowed()));
    }
    if (!t.available()) {
      throw new PysandboxException(ErrorCode.FORBIDDEN, t.unavailable());
    }
    if (!tiers.allowed().contains(t.name())) {
      throw new PysandboxException(
          ErrorCode.FORBIDDEN,
          "tier '"
              + t.name()
              + "' is not allowed on this server (tiers_allowed: "
              + String.join(", ", tiers.allowed())
              + ")");
    }
    return t;
  }

  /**
   * The limits of a new sandbox: the server's defaults where the request says nothing.
   *
   * @throws PysandboxException {@code invalid_argument} naming the limit, the value and the allowed
   *     range when a limit is below the minimum or above the server's maximum
   */
  public Limits limits(LimitRequest req) {
    return limits(req, config.defaultLimits());
  }

  /**
   * The limits of a new sandbox: {@code defaults} (a tier's) where the request says nothing.
   *
   * @throws PysandboxException as {@link #limits(LimitRequest)}
   */
  public Limits limits(LimitRequest req, Limits defaults) {
    Limits d = defaults;
    Limits max = config.maxLimits();
    if (req == null || req.isDefault()) {
      return d;
    }
    long memory =
        bytes(
            "memory_limit_mb",
            req.memoryMb(),
            d.memoryBytes(),
            LimitRequest.MIN_MEMORY_MB,
            max.memoryBytes());
    int pids =
        req.pids() == null
            ? d.pids()
            : (int) range("pids_limit", req.pids(), LimitRequest.MIN_PIDS, max.pids());
    double cpus = d.cpus();
    if (req.cpus() != null) {
      double c = req.cpus();
      if (!(c >= LimitRequest.MIN_CPUS && c <= max.cpus())) {
        throw PysandboxException.invalid(
            "cpu_limit must be between "
                + LimitRequest.MIN_CPUS
                + " and "
                + max.cpus()
                + " (the server's maximum), got "
                + c);
      }
      cpus = c;
    }
    long disk =
        bytes(
            "disk_quota_mb",
            req.diskQuotaMb(),
            d.diskBytes(),
            LimitRequest.MIN_DISK_QUOTA_MB,
            max.diskBytes());
    return new Limits(memory, pids, cpus, disk, d.tmpBytes());
  }

  /**
   * A limit asked in MiB, in bytes: the default when not asked, else checked against the minimum
   * and the server's maximum (memory and disk are asked and checked the same way).
   */
  private static long bytes(
      String name, Integer requestedMb, long defaultBytes, long minMb, long maxBytes) {
    return requestedMb == null
        ? defaultBytes
        : range(name, requestedMb, minMb, maxBytes / Limits.MIB) * Limits.MIB;
  }

  private static long range(String name, long value, long min, long max) {
    if (value < min || value > max) {
      throw PysandboxException.invalid(
          name
              + " must be between "
              + min
              + " and "
              + max
              + " (the server's maximum), got "
              + value);
    }
    return value;
  }

  /**
   * A session's idle TTL: {@code null} (the default) or 1..{@value SessionInfo#MAX_TTL_MINUTES}.
   */
  public static Integer ttlMinutes(Integer ttlMinutes) {
    if (ttlMinutes != null && (ttlMinutes < 1 || ttlMinutes > SessionInfo.MAX_TTL_MINUTES)) {
      throw PysandboxException.invalid(
          "ttl_minutes must be between 1 and "
              + SessionInfo.MAX_TTL_MINUTES
              + ", got "
              + ttlMinutes);
    }
    return ttlMinutes;
  }

  /** How long get_run may wait for a run to end: 0..{@link SandboxService#MAX_WAIT_SECONDS}. */
  public static int waitSeconds(int waitSeconds) {
    if (waitSeconds < 0 || waitSeconds > SandboxService.MAX_WAIT_SECONDS) {
      throw PysandboxException.invalid(
          "wait_seconds must be between 0 and "
              + SandboxService.MAX_WAIT_SECONDS
              + ", got "
              + waitSeconds);
    }
    return waitSeconds;
  }

  /** Files are named by a run or by a session: exactly one of the two. */
  public static void requireExactlyOne(String runId, String sessionId) {
    if ((runId == null) == (sessionId == null)) {
      throw PysandboxException.invalid("give exactly one of run_id and session_id");
    }
  }

  /** The largest file a caller will take: at least 1 byte. */
  public static long maxSizeBytes(long maxSizeBytes) {
    if (maxSizeBytes < 1) {
      throw PysandboxException.invalid("max_size_bytes must be at least 1, got " + maxSizeBytes);
    }
    return maxSizeBytes;
  }

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,199}");

  /** What {@code set_context} may set: at least one value, each under a valid global's name. */
  public static void contextValues(java.util.Map<String, Object> values) {
    if (values == null || values.isEmpty()) {
      throw PysandboxException.invalid("values must be a non-empty JSON object");
    }
    values.keySet().forEach(RequestValidator::validateName);
  }

  /** A Python global's name: an identifier, not a dunder name. */
  public static String validateName(String name) {
    if (name == null || !NAME.matcher(name).matches() || name.startsWith("__")) {
      throw PysandboxException.invalid(
          "variable name "
              + PysandboxException.quote(name)
              + " is invalid: use a Python identifier (not __dunder__)");
    }
    return name;
  }
}
