package dev.pysandbox.backend.bwrap;

import dev.pysandbox.backend.AbstractSandboxBackend;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.worker.WorkerConnection;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * bwrap's own part of starting one sandbox ({@link AbstractSandboxBackend.Launch}): its host uid
 * (taken when it begins) and workspace image, the bwrap command, its cgroup and rlimits, and the
 * launcher's spawn. Host paths under the data directory's {@code sandbox/} are named as bwrap,
 * running as the sandbox's user, reaches them (through the launcher's stage when root).
 */
final class BwrapLaunch implements AbstractSandboxBackend.Launch<BwrapSandbox> {
  private final BwrapBackend backend;
  private final BwrapSetup s;
  private final String id;
  private final SandboxSpec spec;
  private final Path workspace;
  private final HostUser user;
  private final WorkspaceImages.Image image;

  /** Takes the sandbox's uid (a PysandboxException when none is left). */
  BwrapLaunch(BwrapBackend backend, BwrapSetup s, String id, SandboxSpec spec, Path workspace) {
    this.backend = backend;
    this.s = s;
    this.id = id;
    this.spec = spec;
    this.workspace = workspace;
    this.user = s.uids() != null ? s.uids().allocate() : s.runAs();
    this.image =
        s.images().available()
            ? s.images()
                .image(id, spec.limits().diskBytes(), workspace, s.visibleWorkspaces().resolve(id))
            : null;
  }

  @Override
  public HostUser user() {
    return user;
  }

  @Override
  public boolean ownsWorkspaceDirectory() {
    return image == null; // an image's root is made its user's by the launcher
  }

  @Override
  public BwrapSandbox create(WorkerConnection worker, SandboxSpec.Egress.Door egress)
      throws IOException {
    SandboxSpec.Environment env = spec.environment();
    Path envDir = env == null ? null : visible(env.dir());
    Path filter = s.seccompFilter();
    if (egress != null && filter != null) {
      filter = backend.networkFilter(s);
    }
    BwrapCommand.Extras extras =
        new BwrapCommand.Extras(envDir, egress == null ? null : egress.socket(), s.forwarderName());
    List<String> argv =
        BwrapCommand.build(
            backend.config().bwrap(),
            s.python(),
            s.visibleWorkspaces().resolve(id),
            s.visibleLib(),
            s.runnerName(),
            s.analyzerName(),
            reachable(),
            filter != null,
            extras);
    boolean cgroups = s.cgroups().available();
    List<Path> groups = cgroups ? s.cgroups().create(id, spec.limits()) : List.of();
    LauncherClient client = backend.launchers().get();
    SpawnRequest spawn =
        new SpawnRequest(
            id,
            argv,
            backend.hubSocket(),
            WorkerHub.token(worker),
            filter,
            groups,
            backend.rlimits().of(spec.limits(), cgroups, s.uids() != null),
            HostUser.currentUid() == 0 ? user : null,
            image);
    LauncherClient.Child child = client.spawn(spawn);
    return new BwrapSandbox(
        id,
        workspace,
        worker,
        child,
        client,
        backend.blocking(),
        spec.limits(),
        s.cgroups(),
        user,
        image,
        backend::release);
  }

  @Override
  public void undo() {
    s.cgroups().remove(id);
    if (s.uids() != null) {
      s.uids().release(user);
    }
  }

  /** A host path under the data directory's {@code sandbox/} as bwrap reaches it. */
  private Path visible(Path hostPath) {
    Path root = backend.layout().sandboxRoot();
    if (!hostPath.startsWith(root)) {
      throw new IllegalArgumentException(
          hostPath + " is not under " + root + ": sandboxes' users cannot reach it");
    }
    return s.visibleRoot().resolve(root.relativize(hostPath).toString());
  }

  /**
   * The spec with its host directories under the data directory's {@code sandbox/} (a wheelhouse
   * the server copied for a build) named as bwrap reaches them, through the launcher's stage.
   */
  private SandboxSpec reachable() {
    Path root = backend.layout().sandboxRoot();
    return spec.withMounts(
        spec.mounts().stream()
            .map(
                m ->
                    m.source().startsWith(root)
                        ? new SandboxSpec.HostMount(m.name(), visible(m.source()))
                        : m)
            .toList());
  }
}
