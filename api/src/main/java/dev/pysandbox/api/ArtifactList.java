package dev.pysandbox.api;

import java.util.List;

/**
 * The files of a session's workspace (now), or of a run (as it left them).
 *
 * @param sessionId the session asked about, or {@code null}
 * @param runId the run asked about, or {@code null}
 * @param files regular files, in path order (symbolic links and other special files are not listed)
 * @param changes for a run: what it created, modified or deleted; empty for a session
 */
public record ArtifactList(
    String sessionId, String runId, List<FileInfo> files, List<Artifact> changes) {}
