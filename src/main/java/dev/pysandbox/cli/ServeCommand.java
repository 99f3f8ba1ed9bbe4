package dev.pysandbox.cli;

import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.mcp.McpFace;
import io.modelcontextprotocol.server.McpSyncServer;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox serve}: MCP over stdio until the client closes stdin. The real stdout goes to
 * the transport alone; {@code System.out} is pointed at stderr first, so a stray print anywhere can
 * never corrupt the protocol.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = "Serve MCP over stdio (for Claude Code and other clients).")
final class ServeCommand implements Callable<Integer> {
  @ParentCommand Main main;

  @Override
  public Integer call() throws InterruptedException {
    FileOutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
    System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true));
    CountDownLatch stdinClosed = new CountDownLatch(1);
    DefaultSandboxService service = DefaultSandboxService.start(main.config(Map.of()));
    McpSyncServer server =
        new McpFace(service)
            .serveStdio(
                new EofSignal(new FileInputStream(FileDescriptor.in), stdinClosed), protocolOut);
    stdinClosed.await();
    server.closeGracefully();
    service.close();
    return 0;
  }

  /** Counts the latch down when the client closes our stdin. */
  private static final class EofSignal extends FilterInputStream {
    private final CountDownLatch latch;

    EofSignal(InputStream in, CountDownLatch latch) {
      super(in);
      this.latch = latch;
    }

    @Override
    public int read() throws IOException {
      return seen(super.read());
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return seen(super.read(b, off, len));
    }

    private int seen(int n) {
      if (n < 0) {
        latch.countDown();
      }
      return n;
    }
  }
}
