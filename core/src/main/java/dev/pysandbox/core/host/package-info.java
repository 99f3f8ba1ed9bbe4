/**
 * The server process on its host and data directory: the core's shared threads ({@link
 * dev.pysandbox.core.host.CorePools}), the store opened in the background ({@link
 * dev.pysandbox.core.host.StoreHandle}), the instance lock that tells live servers from dead ones,
 * the hub's socket, the protocol's stdout, and the clean-up after a dead server (its sessions,
 * runs, workspaces and sockets). It uses the api, the backend and store SPIs, core.files and
 * core.events (a dead run's spilled output).
 */
package dev.pysandbox.core.host;
