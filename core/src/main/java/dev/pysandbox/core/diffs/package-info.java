/**
 * What changed between two recorded runs ({@code compare_runs}): how they are related, the fields
 * that differ, the code as a unified diff (java-diff-utils, bounded in lines and comparisons), the
 * kept files and the outputs, and a one-sentence summary. Pure functions over {@link
 * dev.pysandbox.api.RunRecord}s: nothing here reads the store or a workspace.
 */
package dev.pysandbox.core.diffs;
