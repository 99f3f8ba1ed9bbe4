package dev.pysandbox.store;

import dev.pysandbox.api.RunRecord;

/** Lets implementation tests in other packages build the contract's sample runs. */
public final class RunStoreContractAccess {
  private RunStoreContractAccess() {}

  public static RunRecord running(String id) {
    return RunStoreContract.running(id, 1000).build();
  }
}
