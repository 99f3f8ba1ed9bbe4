package dev.pysandbox.core.environments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** pip's own lines (pip 23, as it prints them) read for a cause on this host. */
@Fast
class PipFailuresTest {
  private static final String DENIED =
      "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied:"
          + " '/mnt/host/wheels'";

  @Test
  void aPermissionDeniedOnTheWheelhouse_isLocal_andNamesTheHostDirectory() {
    String printed = "Looking in links: /mnt/host/wheels\n" + DENIED + "\nCheck the permissions.\n";
    String line = PipFailures.localError(printed);
    assertThat(line).isEqualTo(DENIED);
    assertThat(PipFailures.explain(line, Path.of("/root/wheels")))
        .endsWith("(/mnt/host/wheels is the wheelhouse, find_links = /root/wheels)");
  }

  @Test
  void pipsErrorLine_isPreferredToATracebacksLine() {
    String printed =
        "PermissionError: [Errno 13] Permission denied: '/opt/pysandbox/env/x'\n"
            + "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on"
            + " device\n";
    assertThat(PipFailures.localError(printed)).contains("[Errno 28]").startsWith("ERROR:");
  }

  @Test
  void connectionErrors_areNotLocal_evenAsAnOSError() {
    String printed =
        "WARNING: Retrying (Retry(total=1, connect=None, read=None, redirect=None, status=None))"
            + " after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
            + "HTTPConnection object at 0x7f>: Failed to establish a new connection: [Errno 111]"
            + " Connection refused')': /simple/tinypkg/\n"
            + "ERROR: Could not install packages due to an OSError:"
            + " HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Max retries exceeded"
            + " (Caused by ProxyError('Cannot connect to proxy.', OSError('Tunnel connection"
            + " failed: 403 Forbidden')))\n";
    assertThat(PipFailures.localError(printed)).isNull();
  }

  @Test
  void theIndexProbesLines_areLeftOut() {
    String printed =
        DENIED + "\n" + BuildScript.UNREACHABLE_MARK + "https://pypi.org/simple timed out\n";
    assertThat(PipFailures.withoutIndexProbes(printed)).isEqualTo(DENIED);
  }
}
