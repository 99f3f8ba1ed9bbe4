package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;

/**
 * The name an MCP client gives itself enters an approval's record ({@code elicitation
 * (client-asserted): <name>}): nothing in it may change how the record reads.
 */
@Fast
class ClientNameTest {
  private static String of(String name) {
    return RunProgress.clientName(McpSchema.Implementation.builder(name, "1").build());
  }

  @Test
  void controlFormatAndSeparatorCharacters_areDropped_andTheNameIsCut() {
    assertThat(of("self\u202eapprover\u2066")).isEqualTo("selfapprover");
    assertThat(of("a\u2028b\u2029c\nd\u001b[2Je")).isEqualTo("abcd[2Je");
    assertThat(of("x".repeat(500))).hasSize(100);
    assertThat(of("\u200b \u202e ")).isEqualTo("client");
  }
}
