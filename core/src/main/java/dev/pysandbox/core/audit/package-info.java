/**
 * What is recorded of runs and kept for review: a run's final record written whatever happens
 * ({@link dev.pysandbox.core.audit.FinalRecords}), what ran it ({@link
 * dev.pysandbox.core.audit.Provenance}), the security events, the notebooks and the hash chain
 * ({@link dev.pysandbox.core.audit.AuditTrail}) and what a reviewer does with them ({@link
 * dev.pysandbox.core.audit.AuditReview}). It uses the api, the store SPI, notebook, core.files,
 * core.host (the shared threads) and core.blobs (verifying and deleting kept files).
 */
package dev.pysandbox.core.audit;
