package dev.pysandbox.core.runs;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.core.audit.FinalRecords;
import dev.pysandbox.store.RunStore;
import java.util.function.Supplier;

/**
 * A tenant's runs as recorded, each with the command that shows it: a run of another tenant answers
 * exactly as one that does not exist ({@code not_found}, the same message).
 */
public final class StoredRuns {
  private final Supplier<RunStore> store;

  public StoredRuns(Supplier<RunStore> store) {
    this.store = store;
  }

  /** The tenant's run without its code; {@code not_found} if the tenant has none with this id. */
  public RunRecord get(String tenant, String runId) {
    return get(tenant, runId, false);
  }

  public RunRecord get(String tenant, String runId, boolean includeCode) {
    Ids.requireRunId(runId);
    return store
        .get()
        .get(runId, includeCode)
        .filter(r -> tenant.equals(r.tenant()))
        .map(r -> r.toBuilder().viewCommand(FinalRecords.viewCommand(r.runId())).build())
        .orElseThrow(
            () -> new PysandboxException(ErrorCode.NOT_FOUND, "no run with id '" + runId + "'"));
  }
}
