package dev.pysandbox.core.host;

import dev.pysandbox.core.files.NativeFs;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * The process's stdout, taken for the MCP protocol alone. The JVM writes to file descriptor 1 on
 * its own: the header of a fatal error report ("A fatal error has been detected by the Java Runtime
 * Environment", about 20 lines) goes there whatever {@code -XX:+DisplayVMOutputToStderr} says
 * (issue 23: a SIGBUS in SQLite put them on the MCP channel). So the stream the client reads is
 * moved to a descriptor of its own, which only the protocol writes to, and descriptor 1 becomes a
 * copy of stderr.
 */
public final class ProtocolStdout {
  private ProtocolStdout() {}

  /**
   * Moves stdout out of the JVM's way and returns the stream the client reads; when that cannot be
   * done (no native library), the old stdout, with a warning.
   *
   * @param nativeDir where the native library is written and loaded from ({@code
   *     <data_dir>/native})
   */
  public static OutputStream take(Path nativeDir) {
    try {
      NativeFs.useDirectory(nativeDir);
      NativeFs.require();
      FileDescriptor fd = NativeFs.moveStdout();
      if (fd != null) {
        return new FileOutputStream(fd);
      }
      warn("the system refused to duplicate it");
    } catch (RuntimeException | UnsatisfiedLinkError e) {
      warn(e.toString());
    }
    return new FileOutputStream(FileDescriptor.out);
  }

  private static void warn(String why) {
    LoggerFactory.getLogger(ProtocolStdout.class)
        .warn(
            "stdout is shared with the JVM ({}): a fatal error report of the JVM would reach the"
                + " MCP client",
            why);
  }
}
