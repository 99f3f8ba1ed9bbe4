package dev.pysandbox.core.agents;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The code of a model reply that has no tool calls: its fenced blocks marked python (or py, or
 * unmarked), joined in order. A reply with none is the final answer.
 */
final class CodeBlocks {
  private static final Pattern FENCE =
      Pattern.compile("```[ \\t]*(python3?|py)?[ \\t]*\\r?\\n(.*?)```", Pattern.DOTALL);

  private CodeBlocks() {}

  /** The code to run, or null when the reply has none. */
  static String extract(String reply) {
    if (reply == null || !reply.contains("```")) {
      return null;
    }
    List<String> blocks = new ArrayList<>();
    Matcher m = FENCE.matcher(reply);
    while (m.find()) {
      String code = m.group(2);
      if (!code.isBlank()) {
        blocks.add(code.stripTrailing());
      }
    }
    return blocks.isEmpty() ? null : String.join("\n\n", blocks) + "\n";
  }
}
