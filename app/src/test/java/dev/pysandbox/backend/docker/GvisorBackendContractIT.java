package dev.pysandbox.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Docker;
import dev.pysandbox.TestEngine;
import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.ResourceUsage;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.worker.WorkerReply;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The backend contract on gVisor: the docker backend with {@code docker_runtime=runsc} on a Podman
 * service whose default runtime is Debian's runsc (Podman's Docker API ignores a container's own
 * runtime, so a service of its own is the way; scripts/podman-service.sh registers runsc with the
 * ptrace platform, no network and host Unix sockets allowed).
 */
@Docker
class GvisorBackendContractIT extends DockerContractBase {

  @Override
  protected Map<String, String> engineSettings() {
    TestEngine engine = TestEngine.gvisor();
    return Map.of(
        "docker_host",
        engine.dockerHost(),
        "docker_image",
        engine.image(),
        "docker_runtime",
        "runsc");
  }

  /**
   * On gVisor the code's processes live in gVisor's kernel, which has no pids limit of its own; the
   * container's pids cgroup bounds gVisor's host threads. Forking past it ends the whole sandbox
   * (gVisor cannot start the thread it needs) instead of failing the fork with EAGAIN: the run is
   * lost, and the usage counts the hit, which is how the core says {@code pids_limit}.
   */
  @Test
  @Override
  protected void pidsLimit_stopsForking_andTheUsageCountsIt() throws Exception {
    Limits d = defaultLimits();
    Sandbox s =
        start(backend, new Limits(d.memoryBytes(), 32, d.cpus(), d.diskBytes(), d.tmpBytes()));
    ResourceUsage before = s.usage().orElseThrow();
    CompletableFuture<WorkerReply> run =
        send(
            s,
            "import os, time\n"
                + "for i in range(500):\n"
                + "    if os.fork() == 0:\n"
                + "        time.sleep(60)\n"
                + "        os._exit(0)\n");
    try {
      WorkerReply r = run.get(30, TimeUnit.SECONDS);
      assertThat(r.frame().path("error").path("name").asText())
          .as("a fork past the limit failed")
          .isEqualTo("BlockingIOError");
    } catch (ExecutionException lost) {
      s.exited().get(10, TimeUnit.SECONDS);
    }
    assertThat(s.usage().orElseThrow().pidsLimitHits()).isGreaterThan(before.pidsLimitHits());
  }
}
