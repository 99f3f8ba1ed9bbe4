package dev.pysandbox.egress;

import java.time.Instant;

/**
 * One request, tunnel or download hop that a sandbox (or the server for it) tried to make through
 * the egress proxy, reported when it ends. Every attempt is a security event.
 *
 * @param at when the attempt began
 * @param method {@code CONNECT} for a tunnel, the HTTP method of a forwarded request ({@code GET},
 *     {@code POST} …), or {@code DOWNLOAD} for one hop of {@link EgressProxy#download}
 * @param host the destination host as the client named it (empty when it named none)
 * @param port the destination port
 * @param address the first checked address the host resolved to, or null when it was refused before
 *     resolving (or the refused address, when an address was the reason)
 * @param allowed true when the policy let it through; false when it was refused, over a limit, or
 *     the host did not resolve (so no connection was made)
 * @param reason why it was not allowed; null when allowed
 * @param bytesOut bytes sent towards the destination (a forwarded request's body; a tunnel's bytes
 *     from the sandbox)
 * @param bytesIn bytes received from the destination (a response body; a tunnel's bytes to the
 *     sandbox)
 */
public record EgressAttempt(
    Instant at,
    String method,
    String host,
    int port,
    String address,
    boolean allowed,
    String reason,
    long bytesOut,
    long bytesIn) {}
