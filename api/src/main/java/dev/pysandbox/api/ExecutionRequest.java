package dev.pysandbox.api;

import java.util.List;

/**
 * One request to run code. What can be checked without the server's configuration is checked here,
 * when the request is made, whichever face made it; the code's size and the timeout's maximum
 * depend on the configuration and are checked by the core.
 *
 * @param code Python source: not blank, no NUL (and at most the configured size in UTF-8 bytes)
 * @param sessionId the session to run in ({@link Ids}), or {@code null} for a fresh one-shot
 *     sandbox
 * @param description free text kept with the run, at most {@value #MAX_DESCRIPTION_CHARS}
 *     characters; only ever treated as data
 * @param timeoutSeconds wall-clock limit, or {@code null} for the configured default
 * @param tier the tier of a one-shot run's sandbox (a session's is the session's), or {@code null}
 *     for the server's default
 * @param requireApproval true: the run waits for a person's approval unless its analysis finds
 *     nothing at or above the server's {@code approval_threshold}; {@code null}: as the server's
 *     {@code approval_policy} says
 * @param dryRun true: analyse only; nothing runs and nothing is recorded
 * @param packages PEP 508 requirements the run's sandbox must have (at most 50; no URLs, paths or
 *     pip options), on top of its session's and of the code's own PEP 723 {@code # /// script}
 *     metadata; empty for none (their specs are checked by the core, which parses them: {@code api}
 *     sits below the {@code packages} parser)
 * @throws PysandboxException {@code invalid_argument} naming what is wrong
 */
public record ExecutionRequest(
    String code,
    String sessionId,
    String description,
    Integer timeoutSeconds,
    String tier,
    Boolean requireApproval,
    boolean dryRun,
    List<String> packages) {
  public static final int MAX_DESCRIPTION_CHARS = 10_000;

  public ExecutionRequest {
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
    if (description != null && description.length() > MAX_DESCRIPTION_CHARS) {
      throw PysandboxException.invalid(
          "description is "
              + description.length()
              + " characters; at most "
              + MAX_DESCRIPTION_CHARS
              + " are allowed");
    }
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
    }
    if (tier != null) {
      Ids.requireTier(tier);
    }
    packages = packages == null ? List.of() : List.copyOf(packages);
  }

  /** A request with the server's tier, approval policy, and no dry run. */
  public ExecutionRequest(
      String code, String sessionId, String description, Integer timeoutSeconds) {
    this(code, sessionId, description, timeoutSeconds, null, null, false, List.of());
  }

  public static ExecutionRequest of(String code) {
    return new ExecutionRequest(code, null, null, null);
  }
}
