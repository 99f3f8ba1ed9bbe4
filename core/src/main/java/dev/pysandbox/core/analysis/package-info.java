/**
 * The risk analysis of code before it runs, by Python's own {@code ast} in a sandbox of its own
 * ({@link dev.pysandbox.core.analysis.CodeAnalysis}), its report shape-checked, and a dry run (the
 * analysis in the shape of a run). It uses the api, the backend SPI, core.sandboxes and core.audit
 * (a dry run's provenance).
 */
package dev.pysandbox.core.analysis;
