package dev.pysandbox.core;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
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
