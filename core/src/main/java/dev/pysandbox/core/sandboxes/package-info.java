/**
 * Sandboxes as the core gets and ends them: the spec of a tier ({@link
 * dev.pysandbox.core.sandboxes.SandboxSpecs}), the warm pool and the spares of package
 * environments, the gate that refuses work while the backend can start none, and the end of a
 * sandbox (how a kill ended, {@link dev.pysandbox.core.sandboxes.KillOutcome}; its workspace
 * released, deleted or kept, {@link dev.pysandbox.core.sandboxes.WorkspaceDisposal}). It uses the
 * api, the backend SPI, core.files and core.blobs (a kept workspace); every role that runs a
 * sandbox (runs, sessions, environment builds, the analysis) uses it.
 */
package dev.pysandbox.core.sandboxes;
