package dev.pysandbox.backend.docker;

import com.github.dockerjava.api.model.Version;
import com.github.dockerjava.api.model.VersionComponent;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.SeccompFilter;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The seccomp profile of every sandbox container: the rules of the bwrap backend's filter, written
 * by the same generator (seccomp_filter.py {@code --docker}) as a Docker/OCI seccomp profile. It
 * replaces the engine's default profile, so it is an allow-list that refuses what ours refuses
 * (same errno: EPERM, EAFNOSUPPORT for socket families, ENOSYS for clone3) and also what Docker's
 * and Podman's defaults refuse a container without capabilities (EPERM), any other syscall with
 * ENOSYS. The {@code network} variant lets AF_INET, AF_INET6 and AF_NETLINK (not its audit
 * protocol) sockets be made; the other lets AF_UNIX only. It assumes the container runs with {@code
 * --cap-drop ALL} (it does not give back what a capability would allow).
 *
 * <p>How it reaches the engine: {@code HostConfig.SecurityOpt} carries {@code seccomp=VALUE}, and
 * the engines read VALUE differently ({@link #securityOpt}). Docker takes the profile's JSON itself
 * (its CLI reads {@code --security-opt seccomp=FILE} and sends the content) and refuses a path at
 * start. Podman's compat API (4.3; later versions as well, unless they take inline profiles) takes
 * a path to a file on the engine's host, opens it at create, and refuses inline JSON with {@code
 * container create: opening seccomp profile failed: open {"defaultAction":...: file name too
 * long}. So Podman must run on this host and be able to read the data directory's {@code run/}.
 *
 * <p>The profile is generated once per data directory and generator version, like the BPF ({@code
 * run/seccomp_filter-<hash>-docker[-net].json}), for the host's architecture; it needs the host
 * Python with libseccomp's binding (python3-seccomp), and fails closed ({@code
 * backend_unavailable}) without it.
 */
public final class DockerSeccomp {
  private static final Map<Path, String> READ = new ConcurrentHashMap<>();

  private DockerSeccomp() {}

  /**
   * The profile's JSON, for {@code HostConfig.SecurityOpt} {@code seccomp=<json>} (Docker).
   *
   * @param python a Python with libseccomp's binding (Debian's {@code /usr/bin/python3} with
   *     python3-seccomp) that runs the generator
   * @param network the variant for sandboxes with a way out (Internet sockets allowed)
   * @throws PysandboxException {@code backend_unavailable} when it cannot be generated
   */
  public static String profile(Path python, DataLayout layout, boolean network) {
    Path file = profileFile(python, layout, network);
    String json = READ.get(file);
    if (json == null) {
      try {
        json = Files.readString(file, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE, "docker: cannot read the seccomp profile: " + e, e);
      }
      READ.put(file, json);
    }
    return json;
  }

  /**
   * The file holding the profile, generated the first time (see {@link #profile}); its name carries
   * the generator's hash, so its content never changes.
   */
  public static Path profileFile(Path python, DataLayout layout, boolean network) {
    String tmpTag =
        ProcessHandle.current().pid()
            + "-"
            + Long.toHexString(ThreadLocalRandom.current().nextLong());
    return SeccompFilter.generate(
            python, layout, tmpTag, SeccompFilter.Output.DOCKER_PROFILE, network)
        .toAbsolutePath();
  }

  /**
   * The {@code HostConfig.SecurityOpt} entry that applies the profile: {@code seccomp=<json>} when
   * the engine takes it inline (Docker), else {@code seccomp=<absolute path>} (Podman).
   *
   * @param inline whether the engine takes the profile's content; see {@link #takesInlineProfile}
   */
  public static String securityOpt(
      Path python, DataLayout layout, boolean network, boolean inline) {
    return "seccomp="
        + (inline
            ? profile(python, layout, network)
            : profileFile(python, layout, network).toString());
  }

  /**
   * Whether the engine answering {@code GET /version} takes a seccomp profile's JSON in {@code
   * SecurityOpt}: Docker does; Podman, which lists a component named "Podman Engine", takes a path.
   */
  public static boolean takesInlineProfile(Version version) {
    if (version == null || version.getComponents() == null) {
      return true;
    }
    for (VersionComponent c : version.getComponents()) {
      if (c.getName() != null && c.getName().toLowerCase(Locale.ROOT).contains("podman")) {
        return false;
      }
    }
    return true;
  }
}
