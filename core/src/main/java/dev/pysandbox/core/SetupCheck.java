package dev.pysandbox.core;

import dev.pysandbox.api.SetupReport;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.InterpreterProbe;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.sandboxes.WarmPool;
import dev.pysandbox.util.TimeSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Builds the {@code check_setup} / {@code doctor} report: what works, what is missing, the fix. */
final class SetupCheck {
  private SetupCheck() {}

  static SetupReport report(
      PysandboxConfig config,
      SandboxBackend backend,
      WarmPool pool,
      int openSessions,
      Optional<String> storeProblem,
      TimeSource clock) {
    List<String> problems = new ArrayList<>();
    Optional<String> why = backend.unavailableReason();
    why.ifPresent(problems::add);
    storeProblem.ifPresent(problems::add);
    Map<String, Object> interpreter = new LinkedHashMap<>();
    interpreter.put("path", config.python().toString());
    Optional<InterpreterInfo> info = backend.interpreter();
    if (info.isPresent()) {
      interpreter.put("version", info.get().version());
      interpreter.put("packages", info.get().packages());
      for (String pkg : InterpreterProbe.EXPECTED_PACKAGES) {
        if (info.get().packages().get(pkg) == null) {
          problems.add(
              "Python package "
                  + pkg
                  + " is missing: apt-get install "
                  + InterpreterProbe.debianPackage(pkg)
                  + " (the data-science stack is expected inside the sandbox)");
        }
      }
    }
    Map<String, Object> limits = new LinkedHashMap<>();
    limits.put("timeout_default_seconds", config.timeoutDefaultSeconds());
    limits.put("timeout_max_seconds", config.timeoutMaxSeconds());
    limits.put("output_limit_bytes", config.outputLimitBytes());
    limits.put("code_max_bytes", config.codeMaxBytes());
    limits.put("max_sessions", config.maxSessions());
    limits.put("open_sessions", openSessions);
    limits.put("session_ttl_minutes", config.sessionTtlMinutes());
    limits.put("upload_max_bytes", config.uploadMaxBytes());
    limits.put("read_max_bytes", config.readMaxBytes());
    limits.put("cancel_grace_seconds", config.cancelGraceSeconds());
    limits.put("output_max_bytes", config.outputMaxBytes());
    limits.put("sandbox_default", config.defaultLimits().describe());
    limits.put("sandbox_max", config.maxLimits().describe());
    Map<String, Object> confinement = backend.confinement().orElse(Map.of());
    limits.put("confinement", confinement);
    problems.addAll(backend.setupProblems());
    Map<String, Object> tiers = config.tiers().describe(config.maxLimits());
    Map<String, Object> poolInfo = new LinkedHashMap<>();
    poolInfo.put("size", pool.size());
    poolInfo.put("ready", pool.readyCount());
    poolInfo.put("preload", config.poolPreload());
    Map<String, String> preloadErrors = pool.preloadErrors();
    if (!preloadErrors.isEmpty()) {
      poolInfo.put("preload_errors", preloadErrors);
      problems.add(
          "pool_preload: the sandbox's runner could not import "
              + preloadErrors
              + "; fix the module names or install the packages");
    }
    pool.lastFailure()
        .ifPresent(
            f -> {
              problems.add(f.describe(clock.instant()));
              Map<String, Object> failure = new LinkedHashMap<>();
              failure.put("message", f.message());
              failure.put("at", f.at().toString());
              failure.put("consecutive", f.consecutive());
              failure.put("retry_at", f.retryAt() == null ? null : f.retryAt().toString());
              poolInfo.put("last_failure", failure);
            });
    Map<String, String> settings = new LinkedHashMap<>();
    config.describe().forEach((k, v) -> settings.put(k, v.value() + " (" + v.source() + ")"));
    return new SetupReport(
        why.isEmpty() && storeProblem.isEmpty(),
        config.dataDir().toString(),
        backend.attempts().stream()
            .map(a -> new SetupReport.BackendStatus(a.name(), a.works(), a.failure()))
            .toList(),
        interpreter,
        backend.sandboxUsers().orElse(null),
        limits,
        tiers,
        poolInfo,
        problems,
        settings);
  }
}
