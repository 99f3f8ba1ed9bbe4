/**
 * Agent runs (issue 26): {@link dev.pysandbox.core.agents.AgentRuns} keeps the live ones and
 * answers {@link dev.pysandbox.api.agent.AgentService} for each tenant; {@link
 * dev.pysandbox.core.agents.AgentLoop} is one agent run's loop (ask the model, run its code in the
 * session through the ordinary run path, give it the result, until it answers or a budget runs
 * out); {@link dev.pysandbox.core.agents.AgentRecorder} writes what happens to the store, the
 * trajectory, the security events and the agent run's notebook.
 */
package dev.pysandbox.core.agents;
