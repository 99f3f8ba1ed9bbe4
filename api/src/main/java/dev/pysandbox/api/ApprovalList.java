package dev.pysandbox.api;

import java.util.List;

/** Approvals waiting for a decision, oldest first. */
public record ApprovalList(List<Approval> approvals) {
  public ApprovalList {
    approvals = approvals == null ? List.of() : List.copyOf(approvals);
  }
}
