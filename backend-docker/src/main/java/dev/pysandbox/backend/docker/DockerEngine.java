package dev.pysandbox.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.exception.NotModifiedException;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import dev.pysandbox.api.Json;
import dev.pysandbox.backend.SandboxExit;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the docker backend asks of a container engine, over the Docker Engine API (docker-java with
 * the Apache HttpClient 5 transport): Docker itself, or Podman's compatible service. Every call is
 * bounded in time; answers the engine's containers give (their logs) are bounded in size.
 */
final class DockerEngine implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DockerEngine.class);

  /** The line {@code container_init.py} writes when the runner has ended. */
  static final String RUNNER_EXIT = "pysandbox-runner-exit ";

  /** Most bytes of a container's log the server reads (its init's lines, a failed start). */
  static final int MAX_LOG_BYTES = 64 * 1024;

  private final String host;
  private final DockerClient client;

  DockerEngine(String host, int maxConnections) {
    this.host = host;
    DefaultDockerClientConfig config =
        DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(host).build();
    ApacheDockerHttpClient http =
        new ApacheDockerHttpClient.Builder()
            .dockerHost(URI.create(host))
            .maxConnections(maxConnections)
            .connectionTimeout(Duration.ofSeconds(5))
            .responseTimeout(Duration.ofSeconds(60))
            .build();
    this.client = DockerClientImpl.getInstance(config, http);
  }

  String host() {
    return host;
  }

  /** What {@code GET /version} answers. */
  com.github.dockerjava.api.model.Version version() {
    return client.versionCmd().exec();
  }

  /** The engine's name and version, e.g. {@code Podman Engine 4.3.1 (API 1.41)}. */
  static String describe(com.github.dockerjava.api.model.Version v) {
    String name =
        v.getComponents() == null || v.getComponents().isEmpty()
            ? "Docker Engine"
            : v.getComponents().get(0).getName();
    return name + " " + v.getVersion() + " (API " + v.getApiVersion() + ")";
  }

  void ping() {
    client.pingCmd().exec();
  }

  /** Whether the engine has the image. */
  boolean hasImage(String image) {
    try {
      client.inspectImageCmd(image).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** Creates a container and returns its id. */
  String create(String image, UnaryOperator<CreateContainerCmd> shape) {
    try (CreateContainerCmd cmd = client.createContainerCmd(image)) {
      return shape.apply(cmd).exec().getId();
    }
  }

  void start(String containerId) {
    client.startContainerCmd(containerId).exec();
  }

  /** The host PID of the container's init, or -1 when it is not running. */
  long initPid(String containerId) {
    InspectContainerResponse.ContainerState state =
        client.inspectContainerCmd(containerId).exec().getState();
    Long pid = state.getPidLong();
    return Boolean.TRUE.equals(state.getRunning()) && pid != null && pid > 0 ? pid : -1;
  }

  /**
   * How the runner ended, from the line its init wrote in the container's log; when there is none
   * (the init itself was killed, or the engine does not answer), how the container ended.
   */
  SandboxExit runnerExit(String containerId) {
    String printed = logs(containerId, 50);
    List<String> lines = printed.lines().toList();
    for (int i = lines.size() - 1; i >= 0; i--) {
      String line = lines.get(i);
      int at = line.indexOf(RUNNER_EXIT);
      if (at >= 0) {
        try {
          JsonNode n = Json.mapper().readTree(line.substring(at + RUNNER_EXIT.length()));
          if (n.has("signal")) {
            return new SandboxExit(null, n.get("signal").asInt(), false);
          }
          return new SandboxExit(n.path("code").asInt(), null, false);
        } catch (IOException e) {
          break;
        }
      }
    }
    try {
      var state = client.inspectContainerCmd(containerId).exec().getState();
      if (Boolean.TRUE.equals(state.getRunning())) {
        return new SandboxExit(null, null, false);
      }
      Long code = state.getExitCodeLong();
      return code != null && code > 128
          ? new SandboxExit(null, (int) (code - 128), false)
          : new SandboxExit(code == null ? null : code.intValue(), null, false);
    } catch (RuntimeException e) {
      return new SandboxExit(null, null, false, "its container could not be inspected: " + e);
    }
  }

  /**
   * The last {@code lines} of a container's log (stdout and stderr), at most {@link
   * #MAX_LOG_BYTES}.
   */
  String logs(String containerId, int lines) {
    StringBuilder out = new StringBuilder();
    try {
      client
          .logContainerCmd(containerId)
          .withStdOut(true)
          .withStdErr(true)
          .withTail(lines)
          .exec(
              new ResultCallback.Adapter<Frame>() {
                @Override
                public void onNext(Frame frame) {
                  synchronized (out) {
                    if (out.length() < MAX_LOG_BYTES) {
                      String s = new String(frame.getPayload(), StandardCharsets.UTF_8);
                      out.append(s, 0, Math.min(s.length(), MAX_LOG_BYTES - out.length()));
                    }
                  }
                }
              })
          .awaitCompletion(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.debug("logs of {}: {}", containerId, e.toString());
    }
    synchronized (out) {
      return out.toString();
    }
  }

  /**
   * Kills (SIGKILL) and removes a container with what the engine made for it; a container already
   * gone is fine.
   *
   * @return why it could not be removed, or {@code null}
   */
  String remove(String containerId) {
    try {
      client.killContainerCmd(containerId).withSignal("KILL").exec();
    } catch (NotFoundException | ConflictException | NotModifiedException e) {
      // not running any more
    } catch (RuntimeException e) {
      log.debug("kill {}: {}", containerId, e.toString());
    }
    try {
      client.removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec();
      return null;
    } catch (NotFoundException e) {
      return null;
    } catch (RuntimeException e) {
      log.warn("cannot remove container {}: {}", containerId, e.toString());
      return "the engine did not remove its container: " + e.getMessage();
    }
  }

  /** Every container (running or not) carrying all these labels. */
  List<Container> withLabels(Map<String, String> labels) {
    return client.listContainersCmd().withShowAll(true).withLabelFilter(labels).exec();
  }

  /** Waits for a container to end; its exit code, or {@code null} when it did not in time. */
  Integer await(String containerId, long seconds) {
    try {
      return client
          .waitContainerCmd(containerId)
          .start()
          .awaitStatusCode(seconds, TimeUnit.SECONDS);
    } catch (RuntimeException e) {
      log.debug("wait {}: {}", containerId, e.toString());
      return null;
    }
  }

  @Override
  public void close() {
    try {
      client.close();
    } catch (IOException e) {
      log.debug("closing the engine client", e);
    }
  }
}
