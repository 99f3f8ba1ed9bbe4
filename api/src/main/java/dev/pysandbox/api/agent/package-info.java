/**
 * Agent runs (issue 26): a language model that writes Python, which pysandbox runs in a session,
 * reads the result and goes on until it answers or a budget runs out. This package holds what the
 * faces, the core, the store and the model providers share: the records of an agent run ({@link
 * dev.pysandbox.api.agent.AgentRunInfo}), the service ({@link
 * dev.pysandbox.api.agent.AgentService}) and the model SPI ({@link
 * dev.pysandbox.api.agent.ModelClient}).
 */
package dev.pysandbox.api.agent;
