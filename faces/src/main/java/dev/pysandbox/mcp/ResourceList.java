package dev.pysandbox.mcp;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunSummary;
import dev.pysandbox.api.SandboxService;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.regex.Pattern;

/**
 * {@code resources/list}: the caller's tenant's runs, newest first, {@link #PAGE_SIZE} a page. The
 * cursor is {@code list_runs}' offset of the next page, as a string, so a page may repeat a run or
 * two when runs are started while a client pages (as {@code list_runs} does). Files are not listed:
 * a run's or a session's are read by template ({@code resources/templates/list}) after {@code
 * list_artifacts}.
 */
final class ResourceList {
  static final int PAGE_SIZE = 50;

  private static final Pattern CURSOR = Pattern.compile("[0-9]{1,9}");

  private ResourceList() {}

  static McpSchema.ListResourcesResult page(SandboxService service, String cursor) {
    int offset = offset(cursor);
    RunPage page;
    try {
      page = service.listRuns(new RunQuery(PAGE_SIZE, offset, null, null));
    } catch (PysandboxException e) {
      throw RunResources.error(e);
    }
    List<McpSchema.Resource> resources = page.runs().stream().map(ResourceList::resource).toList();
    long next = (long) offset + page.runs().size();
    return McpSchema.ListResourcesResult.builder(resources)
        .nextCursor(page.runs().isEmpty() || next >= page.total() ? null : Long.toString(next))
        .build();
  }

  private static int offset(String cursor) {
    if (cursor == null) {
      return 0;
    }
    if (!CURSOR.matcher(cursor).matches()) {
      throw RunResources.invalidParams(
          "Invalid params: the cursor must be one a resources/list answer gave as nextCursor");
    }
    return Integer.parseInt(cursor);
  }

  private static McpSchema.Resource resource(RunSummary r) {
    String what = r.description() != null ? r.description() : r.codePreview();
    return McpSchema.Resource.builder(ResourceUri.run(r.runId()), r.runId())
        .title(what == null ? r.runId() : abbreviate(what, 80))
        .description(
            r.status()
                + ", started "
                + r.createdAt()
                + (r.durationMs() == null ? "" : ", " + r.durationMs() + " ms")
                + (r.sessionId() == null ? "" : ", session " + r.sessionId())
                + (r.errorName() == null ? "" : ", " + r.errorName())
                + (r.codePreview() == null ? "" : ": " + abbreviate(r.codePreview(), 200)))
        .mimeType("application/json")
        .build();
  }

  private static String abbreviate(String s, int max) {
    String line = s.strip().replace('\n', ' ');
    return line.length() <= max ? line : line.substring(0, max - 3) + "...";
  }
}
