package dev.pysandbox.core.runs;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.Tier;
import dev.pysandbox.core.environments.Environments;
import dev.pysandbox.core.environments.RunEnvironments;
import dev.pysandbox.core.network.EgressWays;
import dev.pysandbox.core.sandboxes.SandboxSpecs;
import dev.pysandbox.core.sandboxes.SpareSandboxes;
import dev.pysandbox.core.sandboxes.WarmPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A one-shot run's place: a fresh sandbox of the run's tier and limits (a pooled one, a spare of
 * its package environment, or one started for it), killed once the run has ended, its files kept
 * with the run. The environment is in use while the sandbox runs.
 */
public final class OneShotRun implements RunPlace {
  private static final Logger log = LoggerFactory.getLogger(OneShotRun.class);

  private final RunExecutor executor;
  private final RunEnvironments environments;
  private final SandboxSpecs specs;
  private final EgressWays egress;
  private final SpareSandboxes spares;
  private final WarmPool pool;
  private final FileCollection files;

  public OneShotRun(
      RunExecutor executor,
      RunEnvironments environments,
      SandboxSpecs specs,
      EgressWays egress,
      SpareSandboxes spares,
      WarmPool pool,
      FileCollection files) {
    this.executor = executor;
    this.environments = environments;
    this.specs = specs;
    this.egress = egress;
    this.spares = spares;
    this.pool = pool;
    this.files = files;
  }

  @Override
  public RunRecord run(RunPlan plan, RunListener listener) {
    Environments.Ready env = environments.ensure(plan.wanted(), plan.tenant(), listener);
    RunExecutor.Begun run = executor.begin(plan, null, env, listener);
    Tier tier = plan.tier();
    SandboxSpec spec =
        specs.of(tier, plan.oneShotLimits() == null ? tier.limits() : plan.oneShotLimits());
    if (env != null) {
      spec = spec.withEnvironment(env.mount());
    }
    if (Tier.NETWORK_EGRESS.equals(tier.network())) {
      String runId = plan.runId();
      spec = spec.withEgress(egress.forSession(plan.tenant(), null, null, () -> runId));
    }
    Sandbox sandbox;
    AutoCloseable use = null;
    try {
      if (env != null && spec.egress() == null) {
        // Not the pool's kind: a spare of this environment, started after the last such run.
        SpareSandboxes.Started taken = spares.take(spec, () -> environments.use(env));
        sandbox = taken.sandbox();
        use = taken.held();
      } else {
        use = environments.use(env);
        try {
          sandbox = pool.take(spec);
        } catch (PysandboxException e) {
          close(use);
          throw e;
        }
        AutoCloseable held = use;
        if (held != null) {
          sandbox.exited().whenComplete((x, err) -> close(held));
        }
      }
    } catch (PysandboxException e) {
      executor.fail(run, "no sandbox could be started: " + e.getMessage());
      throw e;
    }
    try {
      Execution.Outcome o = executor.execute(run, sandbox, 0);
      RunRecord done = null;
      try {
        files.oneShot(sandbox, run.record(), run.active());
      } finally {
        // Whatever collecting did (even an Error), the run ends with a record.
        done = executor.complete(run, o);
      }
      return done;
    } finally {
      // The run is over and its sandbox on its way out: the environment is no longer in use.
      close(use);
    }
  }

  private static void close(AutoCloseable use) {
    dev.pysandbox.util.Closeables.quietly(use, log);
  }
}
