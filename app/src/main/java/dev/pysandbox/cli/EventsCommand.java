package dev.pysandbox.cli;

import dev.pysandbox.api.Json;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventList;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * {@code pysandbox events}: a tenant's security events from the run history, newest first, read
 * through a core that only looks. Everything printed from a record is escaped for the terminal
 * (details carry messages and names a caller chose); {@code --json} prints the page as it is.
 */
@Command(
    name = "events",
    description = {
      "List security events, newest first: approvals requested, approved, denied and expired;"
          + " runs stopped by a limit; denied imports and network attempts; sandboxes that died.",
    })
final class EventsCommand extends ListingCommand<SecurityEventList> {
  private static final String ROW = "%-24s  %-18s  %-20s  %-24s  %s%n";

  EventsCommand() {
    super(
        OperationOptions.of(Operations.LIST_SECURITY_EVENTS)
            .option("since")
            .option("kind")
            .option("session_id", "--session")
            .option("limit")
            .option("cursor"));
  }

  @Override
  SecurityEventList ofEveryTenant(OperatorService service, Arguments args) {
    return service.allSecurityEvents(OperationCalls.securityEventQuery(args));
  }

  @Override
  Object jsonOf(SecurityEventList page) {
    return everyTenant ? withTenants(page) : page;
  }

  @Override
  void print(SecurityEventList page) {
    header(ROW, "AT", "KIND", "SESSION", "RUN", "DETAIL");
    for (SecurityEvent e : page.events()) {
      row(
          ROW,
          e.tenant(),
          e.at(),
          TerminalText.escape(e.kind()),
          e.sessionId() == null ? "-" : TerminalText.escape(e.sessionId()),
          e.runId() == null ? "-" : TerminalText.escape(e.runId()),
          TerminalText.escape(Json.write(e.detail())));
    }
    System.out.printf(
        "(%d events%s)%n",
        page.events().size(),
        page.nextCursor() == null ? "" : "; older ones: --cursor " + page.nextCursor());
  }

  /** The page as JSON with each event's tenant, which a tenant's own page never shows. */
  private static Map<String, Object> withTenants(SecurityEventList page) {
    List<Map<String, Object>> events = new ArrayList<>();
    for (SecurityEvent e : page.events()) {
      Map<String, Object> event = new LinkedHashMap<>();
      event.put("tenant", e.tenant());
      event.putAll(Json.toMap(e));
      events.add(event);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("events", events);
    out.put("next_cursor", page.nextCursor());
    return out;
  }
}
