package dev.pysandbox.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * CPU time read from {@code /proc} at one instant, so that two samples tell where a load's CPU
 * went: the server's JVM (by thread name: Jetty's request threads, GC, the JIT…), the processes
 * under it (the launcher and the sandboxes' Pythons, with the children they reaped), this
 * benchmark's own JVM (the clients), the rest of the machine, and what stayed idle.
 */
final class CpuSample {
  private static final long TICK_MS = 1000 / clockTicksPerSecond();

  private final long nanos = System.nanoTime();
  private final long machineBusyMs;
  private final long machineIdleMs;
  private final long selfMs;
  private final long serverMs;
  private final long serverSysMs;
  private final long underServerMs;
  private final Map<Long, Map.Entry<String, Long>> serverThreads;

  private CpuSample(long serverPid) throws IOException {
    String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
    long busy = 0;
    for (int i : new int[] {1, 2, 3, 6, 7, 8}) { // user nice system irq softirq steal
      busy += Long.parseLong(cpu[i]);
    }
    machineBusyMs = busy * TICK_MS;
    machineIdleMs = (Long.parseLong(cpu[4]) + Long.parseLong(cpu[5])) * TICK_MS;
    selfMs = ownTime(ProcessHandle.current().pid());
    Map<Long, long[]> all = processes();
    long[] server = all.getOrDefault(serverPid, new long[4]);
    serverMs = server[1];
    serverSysMs = server[3];
    long under = server[2]; // what the server reaped
    for (long pid : descendants(all, serverPid)) {
      under += all.get(pid)[1] + all.get(pid)[2];
    }
    underServerMs = under;
    serverThreads = threads(serverPid);
  }

  /** Now, for the server with this pid (this JVM's own when the load runs in-process). */
  static CpuSample take(long serverPid) throws IOException {
    return new CpuSample(serverPid);
  }

  /**
   * Where the CPU went between two samples, e.g. {@code server JVM 4.1 s (0.41 ms/call:
   * pysandbox-http 3.0, VM Thread 0.6 …), sandboxes 2.2 s …}.
   */
  static String describe(CpuSample before, CpuSample after, long calls, boolean serverInProcess) {
    double seconds = (after.nanos - before.nanos) / 1e9;
    long server = after.serverMs - before.serverMs;
    long under = after.underServerMs - before.underServerMs;
    long self = after.selfMs - before.selfMs;
    long busy = after.machineBusyMs - before.machineBusyMs;
    long idle = after.machineIdleMs - before.machineIdleMs;
    long rest = busy - (serverInProcess ? 0 : server) - under - self;
    StringBuilder s = new StringBuilder();
    s.append(
        String.format(
            Locale.ROOT,
            "  CPU in %.1f s wall (%d cores): ",
            seconds,
            Runtime.getRuntime().availableProcessors()));
    if (!serverInProcess) {
      s.append(
          String.format(
              Locale.ROOT,
              "server JVM %.2f s (%.0f%% in the kernel; %s/call: %s), ",
              server / 1000.0,
              server == 0 ? 0.0 : 100.0 * (after.serverSysMs - before.serverSysMs) / server,
              perCall(server, calls),
              topThreads(before, after, calls)));
    }
    s.append(
        String.format(
            Locale.ROOT,
            "sandboxes %.2f s (%s/call), %s %.2f s (%s/call), rest of machine %.2f s, idle %.2f s",
            under / 1000.0,
            perCall(under, calls),
            serverInProcess ? "bench JVM = clients + server" : "bench JVM (clients)",
            self / 1000.0,
            perCall(self, calls),
            rest / 1000.0,
            idle / 1000.0));
    if (!serverInProcess && calls > 0 && server + under > 0) {
      // What the machine could serve if the clients and everything else cost nothing.
      s.append(
          String.format(
              Locale.ROOT,
              "%n  server + sandboxes alone would fill %d cores at %.0f calls/s",
              Runtime.getRuntime().availableProcessors(),
              Runtime.getRuntime().availableProcessors() * 1000.0 * calls / (server + under)));
    }
    return s.toString();
  }

  private static String perCall(long ms, long calls) {
    return String.format(Locale.ROOT, "%.3f ms", calls == 0 ? 0.0 : (double) ms / calls);
  }

  /** The server's busiest thread groups (names without their numbers), ms per call. */
  private static String topThreads(CpuSample before, CpuSample after, long calls) {
    Map<String, Long> byName = new HashMap<>();
    after.serverThreads.forEach(
        (tid, t) -> {
          Map.Entry<String, Long> was = before.serverThreads.get(tid);
          long delta = t.getValue() - (was == null ? 0 : was.getValue());
          byName.merge(t.getKey(), delta, Long::sum);
        });
    return byName.entrySet().stream()
        .filter(e -> e.getValue() > 0)
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(6)
        .map(e -> String.format(Locale.ROOT, "%s %s", e.getKey(), perCall(e.getValue(), calls)))
        .collect(Collectors.joining(", "));
  }

  /** Thread id to (name without its number, CPU ms). */
  private static Map<Long, Map.Entry<String, Long>> threads(long pid) {
    Map<Long, Map.Entry<String, Long>> threads = new HashMap<>();
    if (pid <= 0) {
      return threads;
    }
    try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      for (Path task : tasks.toList()) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          threads.put(
              Long.parseLong(task.getFileName().toString()),
              Map.entry(
                  name.replaceAll("[-#\\s]*\\d*$", ""),
                  (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_MS));
        } catch (IOException e) {
          // the thread ended
        }
      }
    } catch (IOException e) {
      // the process ended
    }
    return threads;
  }

  private static long ownTime(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_MS;
  }

  /** Every process: pid to {parent, own CPU ms, reaped children's CPU ms, own system CPU ms}. */
  private static Map<Long, long[]> processes() throws IOException {
    Map<Long, long[]> all = new HashMap<>();
    try (var dirs = Files.list(Path.of("/proc"))) {
      for (Path d : dirs.toList()) {
        String name = d.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        try {
          String stat = Files.readString(d.resolve("stat"));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          all.put(
              Long.parseLong(name),
              new long[] {
                Long.parseLong(f[1]),
                (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_MS,
                (Long.parseLong(f[13]) + Long.parseLong(f[14])) * TICK_MS,
                Long.parseLong(f[12]) * TICK_MS
              });
        } catch (IOException e) {
          // gone
        }
      }
    }
    return all;
  }

  private static Set<Long> descendants(Map<Long, long[]> all, long root) {
    Set<Long> found = new HashSet<>();
    boolean grew = root > 0;
    while (grew) {
      grew = false;
      for (Map.Entry<Long, long[]> p : all.entrySet()) {
        long parent = p.getValue()[0];
        if ((parent == root || found.contains(parent)) && found.add(p.getKey())) {
          grew = true;
        }
      }
    }
    return found;
  }

  private static long clockTicksPerSecond() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      p.waitFor();
      return Long.parseLong(out);
    } catch (IOException | NumberFormatException e) {
      return 100;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 100;
    }
  }
}
