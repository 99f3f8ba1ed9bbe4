package dev.pysandbox.backend;

import dev.pysandbox.config.DataLayout;
import dev.pysandbox.util.DurableFiles;
import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.Map;

/**
 * Writes the files sandboxes need from the jar to disk: the runner and the code analyser it loads
 * (each named by its content hash, so that a new version never replaces a file a running sandbox
 * reads) and a stub {@code /etc} that names the sandbox user and nothing of the host.
 */
public final class SandboxFiles {
  static final Map<String, String> ETC =
      Map.of(
          "passwd",
          "root:x:0:0:root:/root:/usr/sbin/nologin\n"
              + "sandbox:x:1000:1000:sandbox:/tmp:/bin/sh\n"
              + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
          "group",
          "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n",
          "hosts",
          "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
          "nsswitch.conf",
          "passwd: files\ngroup: files\nhosts: files\n");

  private SandboxFiles() {}

  /**
   * Makes the data directory's {@code sandbox/} reachable by sandboxes' users and its {@code
   * workspaces/} passable but not listable, as every backend's set-up does first.
   */
  public static void prepareSandboxRoot(DataLayout layout) throws IOException {
    Files.createDirectories(layout.workspacesDir());
    Files.setPosixFilePermissions(
        layout.sandboxRoot(), PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.setPosixFilePermissions(
        layout.workspacesDir(), PosixFilePermissions.fromString("rwx--x--x"));
  }

  /**
   * Installs a resource of this package as {@code <stem>-<sha256 prefix>.py} in {@code dir}.
   *
   * @return the installed file's name
   */
  public static String installScript(String resource, String stem, Path dir) {
    byte[] content = resource(resource);
    String name = stem + "-" + Sha256.hex(content).substring(0, 16) + ".py";
    writeIfChanged(dir.resolve(name), content);
    return name;
  }

  public static void installEtc(Path libDir) {
    Path etc = libDir.resolve("etc");
    for (Map.Entry<String, String> e : ETC.entrySet()) {
      writeIfChanged(etc.resolve(e.getKey()), e.getValue().getBytes(StandardCharsets.UTF_8));
    }
  }

  static byte[] resource(String name) {
    try (InputStream in = SandboxFiles.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("resource missing from the jar: " + name);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void writeIfChanged(Path file, byte[] content) {
    try {
      if (Files.isRegularFile(file) && MessageDigest.isEqual(Files.readAllBytes(file), content)) {
        return;
      }
      Files.createDirectories(file.getParent());
      DurableFiles.writeReadable(file, content);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }
}
