package dev.pysandbox.backend.bwrap;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.config.UidRange;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A uid range that a host user, group or container range already uses is refused. */
@Fast
class SandboxUidsTest {
  @TempDir Path dir;

  @Test
  void collision_namesTheUserGroupOrSubordinateRangeThatOverlaps() throws Exception {
    Path passwd =
        Files.writeString(dir.resolve("passwd"), "alice:x:300005:300005::/home/a:/bin/sh\n");
    Path group = Files.writeString(dir.resolve("group"), "builders:x:400000:\n");
    Path subuid = Files.writeString(dir.resolve("subuid"), "bob:500000:65536\n");
    List<Path> ids = List.of(passwd, group);
    List<Path> ranges = List.of(subuid);
    assertThat(SandboxUids.collision(new UidRange(300000, 300010), ids, ranges))
        .hasValueSatisfying(why -> assertThat(why).contains("alice").contains("300005"));
    assertThat(SandboxUids.collision(new UidRange(399990, 400000), ids, ranges))
        .hasValueSatisfying(why -> assertThat(why).contains("builders"));
    assertThat(SandboxUids.collision(new UidRange(565535, 600000), ids, ranges))
        .hasValueSatisfying(why -> assertThat(why).contains("500000-565535").contains("bob"));
    assertThat(SandboxUids.collision(new UidRange(565536, 600000), ids, ranges)).isEmpty();
  }
}
