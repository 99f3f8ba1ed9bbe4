/**
 * A run from its request to its record, by one path ({@link dev.pysandbox.core.runs.Runs}): planned
 * ({@link dev.pysandbox.core.runs.RunPlan}), executed under its limits ({@link
 * dev.pysandbox.core.runs.RunExecutor}, {@link dev.pysandbox.core.runs.Execution}) in its place (a
 * fresh sandbox or its session's, {@link dev.pysandbox.core.runs.RunPlace}), its files collected,
 * its final state recorded; the runs in flight, started without their caller, approved later, and
 * the sessions a run opens. The top of the core's roles: it uses every other core package but
 * core.analysis (through core.approvals) and core.workspace, and none of them uses it.
 */
package dev.pysandbox.core.runs;
