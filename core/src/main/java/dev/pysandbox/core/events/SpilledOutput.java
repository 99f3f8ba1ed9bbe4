package dev.pysandbox.core.events;

import dev.pysandbox.api.RunEvent;
import dev.pysandbox.store.RecoveredOutput;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * The output a run had printed when its server died ({@code kill -9}, a crash), read back from the
 * run's event spill ({@link EventSpill}), so that the next server can put it into the run's
 * interrupted record: without it, what the run printed would be in {@code events.ndjson} only, and
 * gone once that is deleted. Kept as a run's own output is: head and tail, up to {@code
 * output_limit} bytes a stream.
 */
public final class SpilledOutput {
  /** At most this many reads of the spill (each takes up to {@link EventSpill#MAX_BYTES}). */
  private static final int MAX_READS = 4;

  private SpilledOutput() {}

  /**
   * What the spill of a run holds, or {@code null} when it holds no output (or is not there).
   *
   * @param keepBytes bytes kept per stream ({@code output_limit})
   */
  public static RecoveredOutput read(Path spill, int keepBytes) {
    EventSpill.Tail tail = new EventSpill.Tail(spill);
    StringBuilder out = new StringBuilder();
    StringBuilder err = new StringBuilder();
    long lagged = 0;
    List<RunEvent> batch;
    for (int i = 0; i < MAX_READS && !(batch = tail.next()).isEmpty(); i++) {
      for (RunEvent e : batch) {
        if (e instanceof RunEvent.Stdout s) {
          out.append(s.text());
        } else if (e instanceof RunEvent.Stderr s) {
          err.append(s.text());
        } else if (e instanceof RunEvent.Lagged l) {
          lagged += l.skippedBytes();
        }
      }
    }
    if (out.isEmpty() && err.isEmpty()) {
      return null;
    }
    byte[] o = out.toString().getBytes(StandardCharsets.UTF_8);
    byte[] r = err.toString().getBytes(StandardCharsets.UTF_8);
    String note =
        "; the output it printed until then ("
            + (o.length + r.length)
            + " bytes"
            + (lagged > 0 ? ", " + lagged + " more bytes were not spilled" : "")
            + ") was recovered from its event spill";
    return new RecoveredOutput(
        kept(o, keepBytes),
        o.length > keepBytes || lagged > 0,
        o.length,
        kept(r, keepBytes),
        r.length > keepBytes || lagged > 0,
        r.length,
        note);
  }

  /** Head and tail, as a run's own capture keeps them. */
  private static String kept(byte[] all, int keepBytes) {
    if (all.length <= keepBytes) {
      return new String(all, StandardCharsets.UTF_8);
    }
    int half = keepBytes / 2;
    long omitted = (long) all.length - 2L * half;
    return new String(all, 0, half, StandardCharsets.UTF_8)
        + "\n[... pysandbox: "
        + omitted
        + " bytes omitted; "
        + all.length
        + " bytes in all, the first "
        + half
        + " and last "
        + half
        + " kept ...]\n"
        + new String(all, all.length - half, half, StandardCharsets.UTF_8);
  }
}
