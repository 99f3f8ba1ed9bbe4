/**
 * Package environments: the cache of virtualenvs by content ({@link
 * dev.pysandbox.core.environments.Environments}), their builds in a sandbox of their own (builder,
 * build script and output, pip's failures, the wheelhouse), the file locks servers share, the
 * listing a tenant sees, and the environment a run or a new session asks for ({@link
 * dev.pysandbox.core.environments.RunEnvironments}). It uses the api, the backend and store SPIs,
 * packages, core.files and core.sandboxes (a build's sandbox, the spares that hold one).
 */
package dev.pysandbox.core.environments;
