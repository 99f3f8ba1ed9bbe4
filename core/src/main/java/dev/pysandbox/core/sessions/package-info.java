/**
 * Sessions: one sandbox that outlives its executions ({@link dev.pysandbox.core.sessions.Session}),
 * the registry of the open ones and their caps ({@link
 * dev.pysandbox.core.sessions.SessionManager}), one operation at a time on each, their ends
 * remembered, expiry, the journal in the store, closing across servers, the context calls and the
 * steps recorded for the notebook. Opening one for a run is core.runs'. It uses the api, the
 * backend and store SPIs, core.files, core.host, core.requests, core.sandboxes and
 * core.environments.
 */
package dev.pysandbox.core.sessions;
