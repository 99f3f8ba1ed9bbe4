package dev.pysandbox.api.op;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every MCP tool is in exactly one group, so that tools_enabled can name any tool set. */
@Fast
class ToolGroupsTest {
  @Test
  void everyOperation_isInExactlyOneGroup() {
    List<String> grouped = new ArrayList<>();
    ToolGroups.GROUPS.values().forEach(ops -> ops.forEach(o -> grouped.add(o.name())));

    assertThat(grouped)
        .doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(
            Stream.concat(Operations.ALL.stream(), Operations.AGENT_APPROVALS.stream())
                .map(Operation::name)
                .toList());
    assertThat(ToolGroups.GROUPS.keySet())
        .containsExactly(
            "run", "approval", "session", "files", "history", "env", "info", "safety", "agent");
  }
}
