package dev.pysandbox.backend.bwrap;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.backend.EscapeSuite;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The escape suite on bubblewrap, with the host's cgroups: what a sandbox leaves behind is its
 * cgroup under this data directory's server groups.
 */
@Sandboxed
class BwrapEscapeTest extends EscapeSuite {
  @Override
  protected Map<String, String> backendSettings() {
    return Map.of("backend", "bwrap");
  }

  /**
   * The sandbox groups under the groups of this data directory's servers in the memory controller's
   * hierarchy (other servers on the host, and what crashed ones left, are not this test's).
   */
  @Override
  protected List<String> sandboxesLeft() throws IOException {
    Path base = ownCgroup("memory", Files.readAllLines(Path.of("/proc/self/cgroup")));
    String scope = "pysandbox-" + new DataLayout(dataDir).identity() + "-";
    List<String> out = new ArrayList<>();
    try (Stream<Path> servers = Files.list(base)) {
      for (Path server : servers.toList()) {
        if (server.getFileName().toString().startsWith(scope)) {
          try (Stream<Path> groups = Files.list(server)) {
            groups.filter(Files::isDirectory).forEach(g -> out.add(g.toString()));
          }
        }
      }
    }
    return out;
  }

  /**
   * The cgroup directory under which this process's server makes its groups: its group in the v1
   * hierarchy of {@code controller} when the host has one (v1, or hybrid with the controller on
   * v1), else its group in the v2 unified hierarchy ({@code 0::/path}). On v2 the server has moved
   * this process into a leaf {@code pysandbox-server-*} below that group, so the leaf's parent is
   * meant.
   */
  static Path ownCgroup(String controller, List<String> procSelfCgroup) {
    String unified = null;
    for (String line : procSelfCgroup) {
      String[] f = line.split(":", 3);
      if (f.length < 3) {
        continue;
      }
      if (List.of(f[1].split(",")).contains(controller)) {
        return Path.of("/sys/fs/cgroup", controller, f[2].substring(1));
      }
      if (f[0].equals("0") && f[1].isEmpty()) {
        unified = f[2];
      }
    }
    if (unified == null) {
      throw new IllegalStateException("no " + controller + " cgroup hierarchy on this host");
    }
    Path group = Path.of("/sys/fs/cgroup", unified.substring(1));
    Path leaf = group.getFileName();
    return leaf != null && leaf.toString().startsWith("pysandbox-server-")
        ? group.getParent()
        : group;
  }

  @Test
  void ownCgroup_readsV1LinesAndTheV2UnifiedLine() {
    assertThat(ownCgroup("memory", List.of("4:memory:/a/b", "0::/")))
        .isEqualTo(Path.of("/sys/fs/cgroup/memory/a/b"));
    assertThat(ownCgroup("memory", List.of("5:cpu,cpuacct:/x", "4:memory:/", "0::/u")))
        .isEqualTo(Path.of("/sys/fs/cgroup/memory"));
    assertThat(ownCgroup("memory", List.of("0::/user.slice/app.scope")))
        .isEqualTo(Path.of("/sys/fs/cgroup/user.slice/app.scope"));
    assertThat(ownCgroup("memory", List.of("0::/app.scope/pysandbox-server-abc-0badc0de")))
        .isEqualTo(Path.of("/sys/fs/cgroup/app.scope"));
  }
}
