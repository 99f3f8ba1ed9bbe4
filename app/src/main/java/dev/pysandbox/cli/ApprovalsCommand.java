package dev.pysandbox.cli;

import dev.pysandbox.api.Approval;
import dev.pysandbox.api.ApprovalList;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.Operations;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pysandbox approvals list|show|approve|deny}: a person on the server's host deciding the
 * runs held for approval, of every tenant (the host's operator), through the data directory's
 * store; the server holding a run starts it within a second of its approval.
 */
@Command(
    name = "approvals",
    description = "Decide the runs held for a person's approval.",
    subcommands = {
      ApprovalsCommand.ListApprovals.class,
      ApprovalsCommand.ShowApproval.class,
      ApprovalsCommand.Approve.class,
      ApprovalsCommand.Deny.class
    })
final class ApprovalsCommand extends CommandGroup {
  @Command(
      name = "list",
      description = "The approvals waiting for a decision, oldest first (every tenant's).")
  static final class ListApprovals extends ReportCommand<ApprovalList> {
    @Override
    ApprovalList fetch(OperatorService service, Arguments args) {
      return service.allPendingApprovals();
    }

    @Override
    void print(ApprovalList list) {
      System.out.printf(
          "%-20s  %-24s  %-16s  %-24s  %s%n", "APPROVAL", "RUN", "SESSION", "EXPIRES", "WHY");
      for (Approval a : list.approvals()) {
        System.out.printf(
            "%-20s  %-24s  %-16s  %-24s  %s%n",
            a.approvalId(),
            a.runId(),
            a.sessionId() == null ? "-" : TerminalText.escape(a.sessionId()),
            a.expiresAt(),
            TerminalText.escape(a.why()));
      }
      System.out.printf("(%d pending)%n", list.approvals().size());
    }
  }

  @Command(
      name = "show",
      description = "One approval: why it waits, its findings and the code it would run.")
  static final class ShowApproval extends ReportCommand<Approval> {
    ShowApproval() {
      super(OperationOptions.of(Operations.APPROVE_RUN).positional("approval_id"));
    }

    @Override
    Approval fetch(OperatorService service, Arguments args) {
      return service.anyApproval(args.string("approval_id"));
    }

    @Override
    void print(Approval a) {
      System.out.println("approval:  " + a.approvalId() + " (" + a.state() + ")");
      System.out.println("run:       " + a.runId());
      System.out.println("session:   " + (a.sessionId() == null ? "-" : a.sessionId()));
      System.out.println("requested: " + a.requestedAt() + ", expires " + a.expiresAt());
      System.out.println("why:       " + TerminalText.escape(a.why()));
      if (a.decidedAt() != null) {
        System.out.println(
            "decided:   "
                + a.decidedAt()
                + " by "
                + TerminalText.escape(String.valueOf(a.decidedBy()))
                + " ("
                + a.decidedVia()
                + ")"
                + (a.decisionReason() == null
                    ? ""
                    : ": " + TerminalText.escape(a.decisionReason())));
      }
      for (RiskFinding f : a.riskFindings()) {
        System.out.println(
            "finding:   "
                + f.severity()
                + " "
                + f.rule()
                + (f.line() == null ? "" : " line " + f.line())
                + ": "
                + TerminalText.escape(f.message()));
      }
      System.out.println("--- code ---");
      System.out.println(a.code() == null ? "(gone)" : TerminalText.escape(a.code()));
    }
  }

  /** approve and deny. */
  abstract static class Decide extends ServiceCommand {

    @Option(names = "--json", description = "Print the run as JSON.")
    boolean json;

    abstract boolean approve();

    Decide() {
      super(OperationOptions.of(Operations.APPROVE_RUN).positional("approval_id").option("reason"));
    }

    @Override
    public Integer call() {
      Arguments args = args();
      String approvalId = args.string("approval_id");
      try (OperatorService service = openReadOnly()) {
        RunRecord run = service.decideAsOperator(approvalId, approve(), args.string("reason"));
        if (json) {
          printJson(run);
        } else {
          System.out.println(
              approvalId
                  + (approve()
                      ? " approved: run " + run.runId() + " starts on the server holding it"
                      : " denied: run " + run.runId() + " is " + run.status()));
        }
        return 0;
      }
    }
  }

  @Command(
      name = "approve",
      description = "Approve a held run: the server holding it runs it within a second.")
  static final class Approve extends Decide {
    @Override
    boolean approve() {
      return true;
    }
  }

  @Command(name = "deny", description = "Deny a held run: it ends denied and never runs.")
  static final class Deny extends Decide {
    @Override
    boolean approve() {
      return false;
    }
  }
}
