package dev.pysandbox.api.op;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The groups of MCP tools (ARCHITECTURE.md, "The MCP tool surface"), by which an operator's {@code
 * tools_enabled} names a smaller tool set than every tool: {@code tools/list} of the whole set is
 * about 48 KB, which some clients spend on every turn (issue 23). Every operation is in exactly one
 * group (ToolGroupsTest).
 */
public final class ToolGroups {
  /** Group name → its operations, in the order tools/list gives them. */
  public static final Map<String, List<Operation>> GROUPS = groups();

  private ToolGroups() {}

  private static Map<String, List<Operation>> groups() {
    Map<String, List<Operation>> m = new LinkedHashMap<>();
    m.put(
        "run",
        List.of(
            Operations.RUN_PYTHON,
            Operations.VALIDATE_CODE,
            Operations.CANCEL_RUN,
            Operations.RERUN));
    m.put(
        "approval",
        List.of(Operations.LIST_PENDING_APPROVALS, Operations.APPROVE_RUN, Operations.DENY_RUN));
    m.put(
        "session",
        List.of(
            Operations.CREATE_SESSION,
            Operations.LIST_SESSIONS,
            Operations.CLOSE_SESSION,
            Operations.GET_CONTEXT,
            Operations.SET_CONTEXT,
            Operations.CLEAR_CONTEXT));
    m.put(
        "files",
        List.of(
            Operations.UPLOAD_FILE,
            Operations.DOWNLOAD_FILE,
            Operations.LIST_ARTIFACTS,
            Operations.READ_ARTIFACT));
    m.put(
        "history",
        List.of(
            Operations.LIST_RUNS,
            Operations.GET_RUN,
            Operations.GET_RUN_OUTPUTS,
            Operations.DIFF_RUNS,
            Operations.DELETE_RUN,
            Operations.PURGE_RUNS,
            Operations.EXPORT_SESSION));
    m.put("env", List.of(Operations.LIST_ENVIRONMENTS, Operations.CLEAN_ENVIRONMENTS));
    m.put("info", List.of(Operations.CHECK_SETUP));
    m.put("safety", List.of(Operations.LIST_SECURITY_EVENTS));
    m.put(
        "agent",
        List.of(
            Operations.AGENT_RUN,
            Operations.AGENT_STATUS,
            Operations.AGENT_CANCEL,
            Operations.LIST_AGENT_RUNS));
    return java.util.Collections.unmodifiableMap(m);
  }

  /**
   * The tool names that {@code names} (tool names and group names, in any mix) stand for.
   *
   * @return every tool's name when {@code names} is empty
   * @throws IllegalArgumentException naming each name that is neither a tool nor a group, with what
   *     is known
   */
  public static Set<String> resolve(List<String> names) {
    Set<String> tools = new LinkedHashSet<>();
    if (names.isEmpty()) {
      GROUPS.values().forEach(ops -> ops.forEach(o -> tools.add(o.name())));
      return java.util.Collections.unmodifiableSet(tools);
    }
    List<String> unknown = new ArrayList<>();
    for (String name : names) {
      List<Operation> group = GROUPS.get(name);
      if (group != null) {
        group.forEach(o -> tools.add(o.name()));
      } else if (Operations.named(name) != null) {
        tools.add(name);
      } else {
        unknown.add("'" + name + "'");
      }
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          String.join(", ", unknown)
              + (unknown.size() == 1 ? " is" : " are")
              + " neither a tool nor a group; groups: "
              + String.join(", ", GROUPS.keySet())
              + "; tools: "
              + String.join(
                  ", ",
                  Stream.concat(Operations.ALL.stream(), Operations.AGENT_APPROVALS.stream())
                      .map(Operation::name)
                      .toList()));
    }
    return java.util.Collections.unmodifiableSet(tools);
  }
}
