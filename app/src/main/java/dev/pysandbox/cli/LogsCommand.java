package dev.pysandbox.cli;

import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.TrajectoryEvent;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox logs}: the trajectories, the calls agents made through every face, read from the
 * data directory's files (no core is opened, nothing is written). One session's file, or all of a
 * tenant's merged by time. A line that is not an event (cut short, edited) is shown as such.
 */
@Command(
    name = "logs",
    description = {
      "Show the calls agents made (MCP, REST, CLI), one line each: time, face, tool, session, run,"
          + " status, duration, the arguments' sizes. Never their content.",
      "Without --session: every file of the tenant, merged by time.",
      "With --all-tenants: every tenant's, each line after its tenant."
    })
final class LogsCommand implements Callable<Integer> {
  private static final long POLL_MILLIS = 250;

  @ParentCommand Main main;

  @Option(names = "--session", paramLabel = "ID", description = "Only this session's calls.")
  String session;

  @Mixin TenantScope tenant;

  @Option(
      names = "--follow",
      description = "Keep printing calls as they are recorded, until interrupted (Ctrl-C).")
  boolean follow;

  @Option(names = "--json", description = "Print the lines as they are stored (JSON).")
  boolean json;

  @Option(
      names = "--since",
      paramLabel = "WHEN",
      description = "Only calls since then: an age (30s, 10m, 2h, 7d) or an instant (ISO-8601).")
  String since;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "200",
      description =
          "At most the last N calls recorded before now (0: all; default ${DEFAULT-VALUE}).")
  int limit;

  /** Files that could not be read, said once each. */
  private final java.util.Set<Path> unreadable = new java.util.HashSet<>();

  /** Whose file each one followed is (its tenant). */
  private final Map<Path, String> owners = new LinkedHashMap<>();

  /** Every tenant's (--all-tenants). */
  private boolean everyTenant;

  private DataLayout layout;

  /** One line read, with its time (a malformed line takes the one before it in its file). */
  private record Entry(
      Instant time, String tenant, String file, String raw, TrajectoryEvent event) {}

  @Override
  public Integer call() throws IOException, InterruptedException {
    boolean all = tenant.all();
    String t = all ? null : Ids.requireTenant(tenant.tenant);
    if (limit < 0) {
      throw PysandboxException.invalid("--limit must be 0 (all) or more, got " + limit);
    }
    Instant from = since == null ? null : since(since, Instant.now());
    layout = main.dataLayout();
    everyTenant = all;
    Map<Path, TrajectoryTail> tails = new LinkedHashMap<>();
    Map<Path, Instant> lastTimes = new LinkedHashMap<>();
    if (session != null) {
      for (String owner : all ? tenants() : List.of(t)) {
        Path file = layout.sessionTrajectory(owner, session);
        tails.put(file, new TrajectoryTail(file));
        owners.put(file, owner);
      }
    }
    List<Entry> backlog = read(t, tails, lastTimes, from);
    if (!follow) {
      for (TrajectoryTail tail : tails.values()) {
        if (tail.unfinished() != null) {
          String owner = owners.get(tail.file());
          backlog.add(
              new Entry(
                  lastTimes.getOrDefault(tail.file(), Instant.EPOCH),
                  owner,
                  name(owner, tail.file()),
                  tail.unfinished(),
                  null));
        }
      }
    }
    backlog.sort(Comparator.comparing(Entry::time));
    int skip = limit == 0 ? 0 : Math.max(0, backlog.size() - limit);
    print(backlog.subList(skip, backlog.size()), System.out, System.err);
    while (follow) {
      Thread.sleep(POLL_MILLIS);
      List<Entry> more = read(t, tails, lastTimes, from);
      more.sort(Comparator.comparing(Entry::time));
      print(more, System.out, System.err);
    }
    return 0;
  }

  /**
   * The lines completed since the last read of every file followed: the session's, or every file of
   * the tenant, or of every tenant for a null one (new ones included).
   */
  private List<Entry> read(
      String t, Map<Path, TrajectoryTail> tails, Map<Path, Instant> lastTimes, Instant from)
      throws IOException {
    if (session == null) {
      for (String owner : t == null ? tenants() : List.of(t)) {
        Path root = layout.trajectoriesDir().resolve(owner);
        for (String kind : List.of("sessions", "days")) {
          for (Path f : files(root.resolve(kind))) {
            tails.computeIfAbsent(f, TrajectoryTail::new);
            owners.putIfAbsent(f, owner);
          }
        }
      }
    }
    List<Entry> entries = new ArrayList<>();
    for (TrajectoryTail tail : tails.values()) {
      List<String> lines;
      try {
        lines = tail.next();
      } catch (IOException e) {
        if (unreadable.add(tail.file())) {
          System.err.println("pysandbox logs: " + TerminalText.escape(e.getMessage()));
        }
        continue;
      }
      for (String raw : lines) {
        if (raw.isBlank()) {
          continue;
        }
        TimedEvent read = parse(raw);
        TrajectoryEvent e = read == null ? null : read.event();
        Instant time =
            read == null ? lastTimes.getOrDefault(tail.file(), Instant.EPOCH) : read.time();
        lastTimes.put(tail.file(), time);
        if (from == null || !time.isBefore(from)) {
          String owner = owners.get(tail.file());
          entries.add(new Entry(time, owner, name(owner, tail.file()), raw, e));
        }
      }
    }
    return entries;
  }

  private void print(List<Entry> entries, PrintStream out, PrintStream err) {
    for (Entry e : entries) {
      if (json) {
        if (e.event() != null) {
          out.println(e.raw());
        } else {
          err.println("pysandbox logs: " + TrajectoryText.malformed(e.file(), e.raw()));
        }
      } else {
        out.println(
            (everyTenant ? String.format("%-20s ", e.tenant()) : "")
                + (e.event() != null
                    ? TrajectoryText.line(e.event(), e.time())
                    : TrajectoryText.malformed(e.file(), e.raw())));
      }
    }
    out.flush();
  }

  /** The regular {@code .jsonl} files of a directory, none through a link. */
  private static List<Path> files(Path dir) throws IOException {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return List.of();
    }
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> all = Files.newDirectoryStream(dir, "*.jsonl")) {
      for (Path f : all) {
        if (Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
          out.add(f);
        }
      }
    }
    out.sort(null);
    return out;
  }

  private String name(String owner, Path file) {
    return layout.trajectoriesDir().resolve(owner).relativize(file).toString();
  }

  /** The tenants that have trajectories: directories with a tenant's name, none through a link. */
  private List<String> tenants() throws IOException {
    Path dir = layout.trajectoriesDir();
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    try (DirectoryStream<Path> all = Files.newDirectoryStream(dir)) {
      for (Path d : all) {
        String name = d.getFileName().toString();
        if (Ids.TENANT_PATTERN.matcher(name).matches()
            && Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
          out.add(name);
        }
      }
    }
    out.sort(null);
    return out;
  }

  /** A call a line records, and when. */
  private record TimedEvent(TrajectoryEvent event, Instant time) {}

  /** The call {@code line} records, or null for a line that is none or whose time does not read. */
  private static TimedEvent parse(String line) {
    try {
      TrajectoryEvent e = Json.mapper().readValue(line, TrajectoryEvent.class);
      return e != null && e.tool() != null && e.status() != null && e.time() != null
          ? new TimedEvent(e, Instant.parse(e.time()))
          : null;
    } catch (IOException | RuntimeException x) { // a DateTimeParseException too
      return null;
    }
  }

  /** {@code --since}: an age ({@code 10m}, {@code PT10M}) before {@code now}, or an instant. */
  static Instant since(String value, Instant now) {
    Instant at = dev.pysandbox.api.Since.at(value.trim(), now, "--since");
    return at == null ? Instant.EPOCH : at;
  }
}
