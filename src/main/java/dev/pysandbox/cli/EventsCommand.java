package dev.pysandbox.cli;

import dev.pysandbox.api.Json;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventList;
import dev.pysandbox.api.SecurityEventQuery;
import dev.pysandbox.core.DefaultSandboxService;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox events}: a tenant's security events from the run history, newest first, read
 * through a core that only looks. Everything printed from a record is escaped for the terminal
 * (details carry messages and names a caller chose); {@code --json} prints the page as it is.
 */
@Command(
    name = "events",
    mixinStandardHelpOptions = true,
    description = {
      "List security events, newest first: approvals requested, approved, denied and expired;"
          + " runs stopped by a limit; denied imports and network attempts; sandboxes that died.",
    })
final class EventsCommand implements Callable<Integer> {
  @ParentCommand Main main;

  @Option(
      names = "--since",
      paramLabel = "AGE|INSTANT",
      description =
          "Only events since then: an age (30s, 10m, 2h, 7d, PT1H) or an ISO-8601 instant.")
  String since;

  @Option(
      names = "--kind",
      description = "Only events of this kind, e.g. limit_stopped_run, sandbox_died.")
  String kind;

  @Option(names = "--session", paramLabel = "ID", description = "Only events of this session.")
  String session;

  @Option(
      names = "--limit",
      defaultValue = "" + SecurityEventQuery.DEFAULT_LIMIT,
      description = "Events to show, 1-1000 (default: ${DEFAULT-VALUE}).")
  int limit;

  @Option(
      names = "--cursor",
      description = "Show the page after this one (the cursor the page before printed).")
  String cursor;

  @Option(names = "--json", description = "Print JSON.")
  boolean json;

  @Mixin TenantScope tenant;

  @Override
  public Integer call() {
    SecurityEventQuery query =
        new SecurityEventQuery(
            since, kind == null ? null : SecurityEvent.Kind.fromWire(kind), session, limit, cursor);
    boolean everyTenant = tenant.all();
    try (DefaultSandboxService service = main.openReadOnly()) {
      SecurityEventList page =
          everyTenant
              ? service.allSecurityEvents(query)
              : tenant.of(service).listSecurityEvents(query);
      if (json) {
        System.out.println(Json.writePretty(everyTenant ? withTenants(page) : page));
        return 0;
      }
      String tenantColumn = everyTenant ? "%-20s  " : "%s";
      System.out.printf(
          tenantColumn + "%-24s  %-18s  %-20s  %-24s  %s%n",
          everyTenant ? "TENANT" : "",
          "AT",
          "KIND",
          "SESSION",
          "RUN",
          "DETAIL");
      for (SecurityEvent e : page.events()) {
        System.out.printf(
            tenantColumn + "%-24s  %-18s  %-20s  %-24s  %s%n",
            everyTenant ? e.tenant() : "",
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
      return 0;
    }
  }

  /** The page as JSON with each event's tenant, which a tenant's own page never shows. */
  private static java.util.Map<String, Object> withTenants(SecurityEventList page) {
    java.util.List<java.util.Map<String, Object>> events = new java.util.ArrayList<>();
    for (SecurityEvent e : page.events()) {
      java.util.Map<String, Object> event = new java.util.LinkedHashMap<>();
      event.put("tenant", e.tenant());
      event.putAll(Json.toMap(e));
      events.add(event);
    }
    java.util.Map<String, Object> out = new java.util.LinkedHashMap<>();
    out.put("events", events);
    out.put("next_cursor", page.nextCursor());
    return out;
  }
}
