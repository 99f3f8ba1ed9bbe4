/**
 * Trajectories: every call a face makes, as one JSON line per call in the data directory (a
 * session's file and the tenant's day file), written off the caller's path through a bounded queue,
 * each line bounded, a full disk or a FIFO planted in place of a file never blocking a call, and
 * old files removed after {@code trajectory_retention_days}. The core hands each call here ({@link
 * dev.pysandbox.core.trajectories.TrajectoryLog#record}); nothing here knows a run.
 */
package dev.pysandbox.core.trajectories;
