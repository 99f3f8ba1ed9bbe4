package dev.pysandbox.core;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** Checks everything a caller sends, at the edge of the core, before anything is created. */
final class RequestValidator {
  static final int MAX_DESCRIPTION_CHARS = 10_000;
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

  private final PysandboxConfig config;

  RequestValidator(PysandboxConfig config) {
    this.config = config;
  }

  /**
   * @return the timeout to apply, in seconds
   */
  int validate(ExecutionRequest req) {
    if (req == null) {
      throw PysandboxException.invalid("no request");
    }
    validateCode(req.code());
    if (req.description() != null && req.description().length() > MAX_DESCRIPTION_CHARS) {
      throw PysandboxException.invalid(
          "description is "
              + req.description().length()
              + " characters; at most "
              + MAX_DESCRIPTION_CHARS
              + " are allowed");
    }
    if (req.sessionId() != null) {
      validateId("session_id", req.sessionId());
    }
    if (req.timeoutSeconds() == null) {
      return config.timeoutDefaultSeconds();
    }
    int t = req.timeoutSeconds();
    if (t < 1 || t > config.timeoutMaxSeconds()) {
      throw PysandboxException.invalid(
          "timeout_seconds must be between 1 and " + config.timeoutMaxSeconds() + ", got " + t);
    }
    return t;
  }

  /** Smallest memory a sandbox may ask for: Python, the runner and a preloaded pandas fit. */
  static final int MIN_MEMORY_MB = 64;

  static final int MIN_PIDS = 4;
  static final double MIN_CPUS = 0.05;

  /**
   * The limits of a new session: the server's defaults where the request says nothing.
   *
   * @throws PysandboxException {@code invalid_argument} naming the limit, the value and the allowed
   *     range when a limit is below the minimum or above the server's maximum
   */
  Limits limits(LimitRequest req) {
    Limits d = config.defaultLimits();
    Limits max = config.maxLimits();
    if (req == null || req.isDefault()) {
      return d;
    }
    long memory =
        req.memoryMb() == null
            ? d.memoryBytes()
            : range(
                    "memory_limit_mb",
                    req.memoryMb(),
                    MIN_MEMORY_MB,
                    max.memoryBytes() / Limits.MIB)
                * Limits.MIB;
    int pids =
        req.pids() == null ? d.pids() : (int) range("pids_limit", req.pids(), MIN_PIDS, max.pids());
    double cpus = d.cpus();
    if (req.cpus() != null) {
      double c = req.cpus();
      if (!(c >= MIN_CPUS && c <= max.cpus())) {
        throw PysandboxException.invalid(
            "cpu_limit must be between "
                + MIN_CPUS
                + " and "
                + max.cpus()
                + " (the server's maximum), got "
                + c);
      }
      cpus = c;
    }
    long disk =
        req.diskQuotaMb() == null
            ? d.diskBytes()
            : range("disk_quota_mb", req.diskQuotaMb(), 1, max.diskBytes() / Limits.MIB)
                * Limits.MIB;
    return new Limits(memory, pids, cpus, disk, d.tmpBytes());
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

  void validateCode(String code) {
    if (code == null) {
      throw PysandboxException.invalid("code is required");
    }
    if (code.isBlank()) {
      throw PysandboxException.invalid("code is empty or only whitespace");
    }
    if (code.indexOf('\0') >= 0) {
      throw PysandboxException.invalid(
          "code contains a NUL character at index " + code.indexOf('\0'));
    }
    int bytes = code.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > config.codeMaxBytes()) {
      throw new PysandboxException(
          ErrorCode.CODE_TOO_LARGE,
          "code is " + bytes + " bytes (UTF-8); the limit is " + config.codeMaxBytes() + " bytes");
    }
  }

  /** Ids are 1-64 characters of letters, digits, '_' and '-'. */
  static String validateId(String what, String id) {
    if (id == null || !ID.matcher(id).matches()) {
      throw PysandboxException.invalid(
          what
              + " "
              + quote(id)
              + " is invalid: use 1-64 characters of letters, digits, '_' and '-'");
    }
    return id;
  }

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,199}");

  /** A Python global's name: an identifier, not a dunder name. */
  static String validateName(String name) {
    if (name == null || !NAME.matcher(name).matches() || name.startsWith("__")) {
      throw PysandboxException.invalid(
          "variable name " + quote(name) + " is invalid: use a Python identifier (not __dunder__)");
    }
    return name;
  }

  private static String quote(String s) {
    if (s == null) {
      return "(missing)";
    }
    String shown = s.length() > 80 ? s.substring(0, 80) + "..." : s;
    return "'" + shown.replace("\n", "\\n") + "'";
  }
}
