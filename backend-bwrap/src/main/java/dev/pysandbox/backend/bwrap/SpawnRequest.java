package dev.pysandbox.backend.bwrap;

import dev.pysandbox.backend.HostUser;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * One sandbox as the launcher is to fork it: built once by {@link BwrapLaunch}, passed through
 * {@link LauncherClient#spawn} and written as a line by {@link LauncherRequests#spawn}, so that the
 * nine things a fork needs travel together instead of as nine parameters of each. The child
 * connects three sockets to {@code socket} (hello lines carry {@code id} and {@code token}), opens
 * the seccomp filter on fd 5, joins the cgroups, sets the rlimits, drops privileges and execs
 * {@code argv}.
 *
 * @param id the sandbox's id
 * @param argv the command the child execs (bwrap and its flags)
 * @param socket the worker hub's socket the child connects to
 * @param token the one-time token its hello lines carry
 * @param seccomp the BPF filter file, or {@code null}
 * @param cgroups directories whose {@code cgroup.procs} the child joins
 * @param rlimits soft and hard value per resource name ({@code AS}, {@code NOFILE}, ...)
 * @param user the host user to run as, or {@code null} for the launcher's default
 * @param image the workspace's file system, made and mounted before the fork, or {@code null}
 */
record SpawnRequest(
    String id,
    List<String> argv,
    Path socket,
    String token,
    Path seccomp,
    List<Path> cgroups,
    Map<String, long[]> rlimits,
    HostUser user,
    WorkspaceImages.Image image) {}
