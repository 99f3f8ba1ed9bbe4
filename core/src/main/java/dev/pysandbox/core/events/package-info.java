/**
 * A run's events as they happen: the bounded per-run log subscribers poll ({@link
 * dev.pysandbox.core.events.RunEventLog}), the logs of the runs in flight and just ended ({@link
 * dev.pysandbox.core.events.LiveRuns}), their spill to {@code events.ndjson} for other processes
 * and what a dead server left there, and the feed to a caller's listener. It knows no sandbox and
 * no session: it uses the api, the store SPI and the worker's listener type only.
 */
package dev.pysandbox.core.events;
