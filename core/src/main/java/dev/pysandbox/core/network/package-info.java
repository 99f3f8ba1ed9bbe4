/**
 * The server's side of every way out of a sandbox ({@link dev.pysandbox.core.network.EgressWays}):
 * one egress proxy, the policies it applies (index hosts for builds, {@code network_allow}, {@code
 * download_file}) and the security event each attempt becomes. It uses the api, the egress gate and
 * core.audit (the security events) only.
 */
package dev.pysandbox.core.network;
