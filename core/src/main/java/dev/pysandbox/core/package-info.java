/**
 * The core's facade and its assembly seam, nothing else: {@link
 * dev.pysandbox.core.DefaultSandboxService} (the core as the faces see it), {@link
 * dev.pysandbox.core.TenantView} (one tenant's view, handing each call to the role whose job it
 * is), {@link dev.pysandbox.core.CoreParts} (what the core needs built for it), {@link
 * dev.pysandbox.core.ServiceWiring} (the parts, built in order) and {@link
 * dev.pysandbox.core.CoreLifecycle} (started and stopped), with the setup check and the metrics
 * relay. The roles are the subpackages, each with its floor (CONTRIBUTING.md, FloorsTest): from the
 * bottom, blobs, events, requests; host, sandboxes; audit, network, environments, analysis;
 * approvals, sessions; workspace, runs. Only this package uses all of them, and none of them uses
 * it.
 */
package dev.pysandbox.core;
