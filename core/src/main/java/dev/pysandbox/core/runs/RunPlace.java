package dev.pysandbox.core.runs;

import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;

/**
 * Where a planned run happens, the one thing that differs between a one-shot run (a fresh sandbox,
 * killed after) and a session's (the session's sandbox, held for the run): where the sandbox comes
 * from, and what becomes of its files. The steps around it are the same for both.
 */
interface RunPlace {
  /**
   * Begins, executes and records the run.
   *
   * @return the run as recorded when it ended (without its code)
   */
  RunRecord run(RunPlan plan, RunListener listener);
}
