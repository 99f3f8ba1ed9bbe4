package dev.pysandbox.cli;

import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.Subscription;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * {@code pysandbox runs watch}: a run's output printed as its events come, then the run's notes,
 * and the run's exit code. The CLI's core is its own process's: a run in flight in a server is
 * followed through what that server spills to {@code <data_dir>/runs/<run id>/events.ndjson} (the
 * core looks every 500 ms) and the store's record at its end; a finished run is printed at once.
 */
final class RunWatch {
  private RunWatch() {}

  /**
   * @param escape whether the code's output goes through {@link TerminalText#escape} (a person's
   *     terminal)
   * @return the exit code {@code pysandbox run} would give the run
   */
  static int watch(
      SandboxService service, String runId, PrintStream out, PrintStream err, boolean escape)
      throws InterruptedException {
    Semaphore told = new Semaphore(0);
    RunCommand.FollowOutput output = new RunCommand.FollowOutput(out, err, escape);
    try (Subscription events = service.attach(runId, 0, told::release)) {
      while (true) {
        List<RunEvent> batch = events.poll(256);
        if (batch.isEmpty()) {
          told.tryAcquire(1, TimeUnit.SECONDS);
          continue;
        }
        for (RunEvent e : batch) {
          if (e instanceof RunEvent.Done d) {
            // Output is printed already; the record gives the error, result and notes.
            RunRecord rest = d.run().toBuilder().stdout("").stderr("").build();
            RunCommand.print(rest, out, err, escape);
            return RunCommand.exitCode(d.run());
          }
          // output as it came; displays (not shown on a terminal), result and error: the record's
          output.event(e);
        }
      }
    }
  }
}
