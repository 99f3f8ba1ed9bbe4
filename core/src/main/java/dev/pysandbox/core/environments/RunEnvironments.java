package dev.pysandbox.core.environments;

import dev.pysandbox.api.RunListener;
import dev.pysandbox.packages.Requirement;
import dev.pysandbox.packages.Requirements;
import dev.pysandbox.packages.ScriptMetadata;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The package environment a run or a new session asks for: the packages named by the call and by
 * its code's PEP 723 block, and the environment for them, built first if need be while the caller
 * is told each line the build prints. One place for both a one-shot run's sandbox and a session's.
 */
public final class RunEnvironments {
  private static final Logger log = LoggerFactory.getLogger(RunEnvironments.class);

  private final Environments environments;

  public RunEnvironments(Environments environments) {
    this.environments = environments;
  }

  /**
   * The packages a call asks for: its own and its code's PEP 723 {@code # /// script} dependencies,
   * as canonical requirements (empty for none).
   */
  public static List<Requirement> wanted(List<String> packages, String code) {
    List<Requirement> own = Requirements.parse(packages);
    List<Requirement> inline = Requirements.parse(ScriptMetadata.dependencies(code));
    return Requirements.merge(own, inline);
  }

  /** The environment for these requirements, built first if need be; null for none. */
  public Environments.Ready ensure(List<Requirement> wanted, String tenant, RunListener progress) {
    if (wanted.isEmpty()) {
      return null;
    }
    return environments.ensure(
        wanted,
        tenant,
        line -> {
          log.debug("environment build: {}", line);
          progress.preparing(line);
        });
  }

  /** A use of the environment, held while a sandbox of it runs; null for none. */
  public AutoCloseable use(Environments.Ready env) {
    return env == null ? null : environments.use(env);
  }
}
