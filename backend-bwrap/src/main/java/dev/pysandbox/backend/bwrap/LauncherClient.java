package dev.pysandbox.backend.bwrap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;
import dev.pysandbox.backend.SandboxExit;
import dev.pysandbox.util.DaemonThreads;
import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of {@code launcher.py}: one helper process that forks, reaps and kills every
 * sandbox, so that the JVM keeps one reaper thread in all instead of one per sandbox. Replies and
 * events arrive on one reader thread and complete the futures of the sandbox they name. If the
 * helper dies, its sandboxes die with it (they are started with {@code --die-with-parent}); every
 * pending future then completes and the next spawn starts a new helper.
 */
final class LauncherClient implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(LauncherClient.class);
  private static final ObjectMapper JSON = Json.mapper();

  /** What the launcher reported about one sandbox. */
  static final class Child {
    final String id;
    final CompletableFuture<Long> spawned = new CompletableFuture<>();

    /** Host pid of the sandbox's PID 1 and its PID namespace, or null when unknown. */
    final CompletableFuture<long[]> init = new CompletableFuture<>();

    final CompletableFuture<SandboxExit> exited = new CompletableFuture<>();
    volatile boolean killRequested;

    Child(String id) {
      this.id = id;
    }
  }

  /** Optional bind mount the launcher makes in its own mount namespace (see launcher.py). */
  record Stage(Path source, Path target) {}

  /**
   * Starts every launcher. The launcher asks the kernel to kill it when its parent dies
   * (PR_SET_PDEATHSIG), and the kernel means the parent <em>thread</em>: started from a pooled
   * thread, it died when that thread was retired after a minute idle, taking every run and session
   * with it. This thread lives as long as the server.
   */
  private static final ExecutorService SPAWNER =
      Executors.newSingleThreadExecutor(DaemonThreads.named("pysandbox-launcher-spawner"));

  private final Process process;
  private final OutputStream stdin;
  private final Map<String, Child> children = new ConcurrentHashMap<>();
  private final Map<Long, CompletableFuture<Void>> pending = new ConcurrentHashMap<>();
  private final AtomicLong refs = new AtomicLong();
  private final Thread reader;
  private final Runnable onDeath;
  private volatile boolean alive = true;
  private volatile boolean closing;

  private LauncherClient(Process process, Runnable onDeath) {
    this.process = process;
    this.stdin = process.getOutputStream();
    this.onDeath = onDeath;
    this.reader = DaemonThreads.newThread("pysandbox-launcher", this::readLoop);
  }

  /**
   * Starts the helper.
   *
   * @param instanceId the server's instance id, which names the helper's spare workspace image
   * @param uid host user a sandbox runs as when its spawn names none, or {@code null} (a root
   *     launcher then refuses spawns that name none)
   * @param stage a bind mount to make first, or {@code null}
   * @param onLost run on the reader thread when the helper dies without being closed, once its
   *     sandboxes have been reported gone
   */
  static LauncherClient start(
      Path python,
      Path script,
      String instanceId,
      Integer uid,
      Integer gid,
      Stage stage,
      Runnable onDeath)
      throws IOException {
    ProcessBuilder pb = new ProcessBuilder(python.toString(), "-I", "-S", script.toString());
    pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().clear();
    pb.environment().put("PATH", "/usr/bin:/bin");
    Process p;
    try {
      p = SPAWNER.submit(pb::start).get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the sandbox launcher", e);
    }
    LauncherClient client = new LauncherClient(p, onDeath);
    ObjectNode setup = LauncherRequests.setup(instanceId, uid, gid, stage);
    client.reader.start();
    client.write(setup);
    return client;
  }

  /** Waits at most this long for the helper to exit (after {@link #close()}). */
  void awaitExit(long millis) {
    try {
      process.waitFor(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  boolean isAlive() {
    return alive && process.isAlive();
  }

  /** Forks a sandbox, as {@link SpawnRequest} describes. */
  Child spawn(SpawnRequest spawn) {
    String id = spawn.id();
    Child child = new Child(id);
    if (children.putIfAbsent(id, child) != null) {
      throw new IllegalArgumentException("duplicate sandbox id " + id);
    }
    ObjectNode req = LauncherRequests.spawn(spawn);
    try {
      write(req);
    } catch (IOException e) {
      children.remove(id);
      child.spawned.completeExceptionally(e);
    }
    return child;
  }

  /**
   * Unmounts a workspace image in both namespaces and deletes it (what is already gone is fine).
   *
   * @return completes when the launcher has done it, exceptionally with what failed
   */
  CompletableFuture<Void> release(String id, WorkspaceImages.Image image) {
    ObjectNode req = LauncherRequests.release(id, image);
    return request(req);
  }

  /** Makes, mounts, writes to and releases one image: proves that the host allows them. */
  CompletableFuture<Void> probe(WorkspaceImages.Image image) {
    ObjectNode req = LauncherRequests.probe(image);
    return request(req);
  }

  private CompletableFuture<Void> request(ObjectNode req) {
    long ref = refs.incrementAndGet();
    CompletableFuture<Void> done = new CompletableFuture<>();
    pending.put(ref, done);
    req.put("ref", ref);
    try {
      write(req);
    } catch (IOException e) {
      pending.remove(ref);
      done.completeExceptionally(e);
    }
    return done;
  }

  /** SIGKILL to the sandbox's process group, unless the launcher already reaped it. */
  void kill(Child child) {
    child.killRequested = true;
    if (child.exited.isDone()) {
      return;
    }
    ObjectNode req = LauncherRequests.kill(child.id);
    try {
      write(req);
    } catch (IOException e) {
      log.warn("could not ask the launcher to kill {}: {}", child.id, e.getMessage());
    }
  }

  private synchronized void write(ObjectNode msg) throws IOException {
    if (!isAlive()) {
      throw new IOException("the sandbox launcher is not running");
    }
    stdin.write(JSON.writeValueAsBytes(msg));
    stdin.write('\n');
    stdin.flush();
  }

  private void readLoop() {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        try {
          dispatch(JSON.readTree(line));
        } catch (IOException | RuntimeException e) {
          log.warn("bad line from the sandbox launcher: {}", line, e);
        }
      }
    } catch (IOException e) {
      log.debug("launcher stream closed", e);
    }
    alive = false;
    String why = deathCause();
    if (!closing) {
      log.error("{}; its sandboxes are gone with it", why);
    }
    for (Child c : children.values()) {
      c.spawned.completeExceptionally(new IOException(why));
      c.init.complete(null);
      c.exited.complete(new SandboxExit(null, 9, c.killRequested, closing ? null : why));
    }
    children.clear();
    pending.values().forEach(f -> f.completeExceptionally(new IOException(why)));
    pending.clear();
    if (!closing) {
      try {
        onDeath.run();
      } catch (RuntimeException e) {
        log.warn("after the launcher died", e);
      }
    }
  }

  private String deathCause() {
    String how;
    try {
      if (process.waitFor(200, TimeUnit.MILLISECONDS)) {
        int code = process.exitValue();
        how = code > 128 ? "was killed by signal " + (code - 128) : "exited with code " + code;
      } else {
        how = "closed its pipe";
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      how = "stopped answering";
    }
    return "the sandbox launcher (pid " + process.pid() + ") " + how;
  }

  private void dispatch(JsonNode ev) {
    String type = ev.path("type").asText();
    Child c = children.get(ev.path("id").asText(""));
    switch (type) {
      case "hello" -> log.debug("sandbox launcher up, pid {}", ev.path("pid").asLong());
      case "spawned" -> {
        if (c != null) {
          c.spawned.complete(ev.path("pid").asLong());
        }
      }
      case "spawn_failed" -> {
        if (c != null) {
          children.remove(c.id);
          c.spawned.completeExceptionally(new IOException(ev.path("error").asText()));
          c.init.complete(null);
          c.exited.complete(new SandboxExit(127, null, false));
        }
      }
      case "info" -> {
        if (c != null) {
          boolean known = ev.path("child_pid").isNumber() && ev.path("pidns").isNumber();
          c.init.complete(
              known ? new long[] {ev.path("child_pid").asLong(), ev.path("pidns").asLong()} : null);
        }
      }
      case "killed" -> {
        // the exit event follows
      }
      case "done" -> {
        CompletableFuture<Void> f = pending.remove(ev.path("ref").asLong());
        if (f != null && ev.path("error").isTextual()) {
          f.completeExceptionally(new IOException(ev.path("error").asText()));
        } else if (f != null) {
          f.complete(null);
        }
      }
      case "exit" -> {
        if (c != null) {
          children.remove(c.id);
          c.init.complete(null);
          Integer code = ev.path("code").isNumber() ? ev.path("code").asInt() : null;
          Integer signal = ev.path("signal").isNumber() ? ev.path("signal").asInt() : null;
          c.exited.complete(new SandboxExit(code, signal, c.killRequested));
        }
      }
      default -> log.warn("sandbox launcher says: {}", ev);
    }
  }

  @Override
  public void close() {
    close(500);
  }

  /**
   * Ends the helper's input: it kills every sandbox, releases every workspace image it mounted and
   * exits. Waits at most {@code waitMillis} for that; a helper still releasing then is left to
   * finish on its own (killing it would leave mount points on the host that nobody else may remove;
   * its sandboxes are already dead, killed first).
   */
  void close(long waitMillis) {
    closing = true;
    alive = false;
    try {
      stdin.close();
    } catch (IOException e) {
      log.debug("closing launcher stdin", e);
    }
    try {
      if (!process.waitFor(waitMillis, TimeUnit.MILLISECONDS)) {
        log.info(
            "the sandbox launcher is still releasing workspaces after {} ms; it finishes on its"
                + " own",
            waitMillis);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
