package dev.pysandbox.cli;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.op.Arguments;
import java.util.Map;
import picocli.CommandLine.Command;

/** {@code pysandbox doctor}: what is installed, what is missing and how to install it. */
@Command(name = "doctor", description = "Check what is installed and what is missing.")
final class DoctorCommand extends ReportCommand<SetupReport> {
  @Override
  SetupReport fetch(OperatorService service, Arguments args) {
    return service.checkSetup();
  }

  @Override
  int exitCode(SetupReport r) {
    return r.ready() ? 0 : ErrorCode.BACKEND_UNAVAILABLE.exitCode();
  }

  @Override
  void print(SetupReport r) {
    System.out.println("pysandbox doctor");
    System.out.println("  data directory: " + r.dataDir());
    for (SetupReport.BackendStatus b : r.backends()) {
      System.out.println(
          "  backend " + b.name() + ": " + (b.available() ? "ok" : "unavailable: " + b.reason()));
    }
    System.out.println("  sandbox user:   " + (r.sandboxUser() == null ? "-" : r.sandboxUser()));
    System.out.println(
        "  python:         "
            + r.interpreter().get("path")
            + " "
            + r.interpreter().getOrDefault("version", "(not usable)"));
    if (r.interpreter().get("packages") instanceof Map<?, ?> pkgs) {
      pkgs.forEach((k, v) -> System.out.println("    " + k + ": " + (v == null ? "MISSING" : v)));
    }
    Map<String, Object> limits = new java.util.LinkedHashMap<>(r.limits());
    Object confinement = limits.remove("confinement");
    Object defaults = limits.remove("sandbox_default");
    Object max = limits.remove("sandbox_max");
    System.out.println("  confinement:    " + confinement);
    System.out.println("  sandbox limits: " + defaults);
    System.out.println("    (maxima):     " + max);
    System.out.println("  limits:         " + limits);
    System.out.println(
        "  tiers:          default "
            + r.tiers().get("default")
            + ", allowed "
            + r.tiers().get("allowed"));
    if (r.tiers().get("tiers") instanceof Map<?, ?> tiers) {
      tiers.forEach(
          (name, t) -> {
            Map<?, ?> d = (Map<?, ?>) t;
            Map<?, ?> mounts = (Map<?, ?>) d.get("mounts");
            System.out.println(
                "    "
                    + name
                    + (Boolean.TRUE.equals(d.get("available")) ? "" : " (not available)")
                    + ": network "
                    + d.get("network")
                    + ", host directories "
                    + (mounts.isEmpty() ? "none" : mounts.keySet())
                    + ", limits "
                    + d.get("limits"));
          });
    }
    if (r.problems().isEmpty()) {
      System.out.println("everything needed is installed");
    } else {
      System.out.println("problems:");
      r.problems().forEach(p -> System.out.println("  - " + p));
    }
  }
}
