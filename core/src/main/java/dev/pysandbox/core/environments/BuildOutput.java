package dev.pysandbox.core.environments;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.worker.RequestListener;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an environment build prints, split into lines for its progress listener as it comes, the
 * last few kept to explain a failure. The build's result line ({@link #RESULT_MARK}) is not shown;
 * an index the build script found unreachable is said in words.
 */
final class BuildOutput implements RequestListener {
  private static final Logger log = LoggerFactory.getLogger(BuildOutput.class);

  /** Starts the line on which the build script prints its result as JSON. */
  static final String RESULT_MARK = "@@pysandbox-env ";

  /** What a build may print that is kept to explain a failure. */
  static final int FAILURE_TAIL_CHARS = 4000;

  private final Consumer<String> progress;
  private final StringBuilder partial = new StringBuilder();
  private final StringBuilder tail = new StringBuilder();

  BuildOutput(Consumer<String> progress) {
    this.progress = progress;
  }

  @Override
  public synchronized void output(boolean stderr, ByteBuffer bytes) {
    byte[] b = new byte[bytes.remaining()];
    bytes.get(b);
    partial.append(new String(b, StandardCharsets.UTF_8));
    int nl;
    while ((nl = partial.indexOf("\n")) >= 0) {
      String line = partial.substring(0, nl).stripTrailing();
      partial.delete(0, nl + 1);
      if (!line.startsWith(RESULT_MARK) && !line.isBlank()) {
        if (line.startsWith(BuildScript.UNREACHABLE_MARK)) {
          line = "index unreachable: " + line.substring(BuildScript.UNREACHABLE_MARK.length());
        }
        tail.append(line).append('\n');
        if (tail.length() > 2 * FAILURE_TAIL_CHARS) {
          tail.delete(0, tail.length() - FAILURE_TAIL_CHARS);
        }
        try {
          progress.accept(line.length() > 500 ? line.substring(0, 500) + "..." : line);
        } catch (RuntimeException e) {
          log.debug("environment build progress listener failed", e);
        }
      }
    }
    if (partial.length() > 64 * 1024) {
      partial.setLength(0);
    }
  }

  @Override
  public void display(ObjectNode bundle, long frameBytes) {}

  /** The last lines printed, at most {@link #FAILURE_TAIL_CHARS}. */
  synchronized String tail() {
    return tail(tail.toString().strip());
  }

  /** The end of {@code s}, at most {@link #FAILURE_TAIL_CHARS}. */
  static String tail(String s) {
    return s.length() <= FAILURE_TAIL_CHARS
        ? s
        : "..." + s.substring(s.length() - FAILURE_TAIL_CHARS);
  }
}
