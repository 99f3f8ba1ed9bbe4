/**
 * Files in and out of a session's workspace, as a caller moves them: uploads, downloads through the
 * egress policy, and reading files (a session's as they are now, a run's as it kept them). It uses
 * the api, the backend and store SPIs, core.files, core.blobs, core.requests, core.network and
 * core.sessions.
 */
package dev.pysandbox.core.workspace;
