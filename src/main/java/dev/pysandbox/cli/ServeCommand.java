package dev.pysandbox.cli;

import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.mcp.McpFace;
import dev.pysandbox.mcp.StdioConnection;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox serve}: MCP over stdio until the client closes stdin. The real stdout goes to
 * the transport alone; {@code System.out} is pointed at stderr first, so a stray print anywhere can
 * never corrupt the protocol. When stdin ends (or the process is told to stop), runs in flight end
 * {@code interrupted}, their answers are written if the client still reads, every sandbox is
 * killed, and the process exits — within about a second.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = "Serve MCP over stdio (for Claude Code and other clients).")
final class ServeCommand implements Callable<Integer> {
  /** How long answers to calls that were in flight may take to be written at the end. */
  private static final long ANSWER_WAIT_MILLIS = 500;

  private static boolean stopped;

  @ParentCommand Main main;

  @Override
  public Integer call() {
    FileOutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
    System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true));
    PysandboxConfig config = main.config(Map.of());
    DefaultSandboxService service = DefaultSandboxService.start(config);
    StdioConnection connection =
        new McpFace(service, config.resultOutputLimitBytes())
            .serveStdio(
                new FileInputStream(FileDescriptor.in),
                protocolOut,
                McpFace.maxMessageBytes(config.uploadMaxBytes()));
    Thread hook =
        new Thread(
            () -> stop(service, connection, "the server was told to stop (a signal)"),
            "pysandbox-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    connection.closed().join();
    stop(service, connection, "the MCP client closed the connection (end of stdin)");
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // already shutting down
    }
    return 0;
  }

  /**
   * Once: a signal during the stop at end of stdin (or the reverse) waits for the stop under way
   * instead of running a second one beside it.
   */
  private static synchronized void stop(
      DefaultSandboxService service, StdioConnection connection, String why) {
    if (stopped) {
      return;
    }
    stopped = true;
    service.interruptRuns(why, 600);
    connection.close(ANSWER_WAIT_MILLIS);
    service.close(why);
  }
}
