/**
 * Runs held for a person: which runs wait ({@link dev.pysandbox.core.approvals.ApprovalPolicy},
 * from core.analysis) and the records of the held runs and their decisions ({@link
 * dev.pysandbox.core.approvals.Approvals}). What runs once approved is core.runs' (it uses this
 * package, never the other way). It uses the api, the store SPI, core.requests, core.audit and
 * core.analysis.
 */
package dev.pysandbox.core.approvals;
