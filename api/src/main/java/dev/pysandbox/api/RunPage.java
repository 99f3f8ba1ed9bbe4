package dev.pysandbox.api;

import java.util.List;

/** A page of run summaries and the total that matched the query. */
public record RunPage(List<RunSummary> runs, long total, int limit, int offset) {}
