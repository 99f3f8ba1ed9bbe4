/**
 * Small helpers that several layers need written once: each class does one job and is named for it
 * ({@link dev.pysandbox.util.Sha256}, {@link dev.pysandbox.util.RandomIds}, {@link
 * dev.pysandbox.util.DaemonThreads}, {@link dev.pysandbox.util.Pause}, {@link
 * dev.pysandbox.util.Futures}, {@link dev.pysandbox.util.TimeSource}). Nothing here depends on any
 * other pysandbox package, so every package, the lowest ({@code worker}) included, can use it
 * without a cycle.
 */
package dev.pysandbox.util;
