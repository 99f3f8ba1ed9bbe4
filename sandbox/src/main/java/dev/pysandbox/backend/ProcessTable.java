package dev.pysandbox.backend;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the host's process table from {@code /proc}: which processes live in a given PID namespace,
 * and which processes' command lines mention a given text. Used to prove that a killed sandbox left
 * nothing behind and to find sandboxes a dead server left.
 */
public final class ProcessTable {
  private static final Path PROC = Path.of("/proc");

  private ProcessTable() {}

  /** Host PIDs of the live (not zombie) processes whose PID namespace has this inode. */
  public static List<Long> inPidNamespace(long namespaceInode) {
    List<Long> pids = new ArrayList<>();
    for (long pid : allPids()) {
      if (!isAlive(pid)) {
        continue;
      }
      try {
        Object ino = Files.getAttribute(PROC.resolve(pid + "/ns/pid"), "unix:ino");
        if (ino instanceof Long l && l == namespaceInode) {
          pids.add(pid);
        }
      } catch (IOException | UnsupportedOperationException | SecurityException e) {
        // gone, or not ours to look at
      }
    }
    return pids;
  }

  /** Host PIDs whose command line contains {@code text} (arguments joined by spaces). */
  public static List<Long> withCommandLineContaining(String text) {
    List<Long> pids = new ArrayList<>();
    long self = ProcessHandle.current().pid();
    for (long pid : allPids()) {
      if (pid == self) {
        continue;
      }
      try {
        byte[] raw = Files.readAllBytes(PROC.resolve(pid + "/cmdline"));
        for (int i = 0; i < raw.length; i++) {
          if (raw[i] == 0) {
            raw[i] = ' ';
          }
        }
        if (new String(raw, java.nio.charset.StandardCharsets.UTF_8).contains(text)) {
          pids.add(pid);
        }
      } catch (IOException e) {
        // gone
      }
    }
    return pids;
  }

  /**
   * True when the process exists and has not exited (a zombie has exited: it holds nothing but its
   * process-table entry until its parent reaps it).
   */
  public static boolean isAlive(long pid) {
    try {
      String stat = Files.readString(PROC.resolve(pid + "/stat"));
      int close = stat.lastIndexOf(')');
      char state = close > 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
      return state != 'Z' && state != 'X' && state != 'x';
    } catch (IOException e) {
      return false;
    }
  }

  /** The inode of a process's PID namespace, or -1 when it is gone or not ours to look at. */
  public static long pidNamespaceOf(long pid) {
    try {
      Object ino = Files.getAttribute(PROC.resolve(pid + "/ns/pid"), "unix:ino");
      return ino instanceof Long l ? l : -1;
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return -1;
    }
  }

  /** True when the process exists, is alive, and is in the given PID namespace. */
  public static boolean isAliveIn(long pid, long namespaceInode) {
    try {
      Object ino = Files.getAttribute(PROC.resolve(pid + "/ns/pid"), "unix:ino");
      return ino instanceof Long l && l == namespaceInode && isAlive(pid);
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return false;
    }
  }

  /** SIGKILL, ignoring processes that are already gone. */
  public static void killNow(long pid) {
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
  }

  private static List<Long> allPids() {
    List<Long> pids = new ArrayList<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(PROC)) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        if (!name.isEmpty() && Character.isDigit(name.charAt(0))) {
          try {
            pids.add(Long.parseLong(name));
          } catch (NumberFormatException e) {
            // not a process
          }
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list /proc", e);
    }
    return pids;
  }
}
