package dev.pysandbox.api;

/**
 * A person's answer to a run held for approval, as a face obtained it.
 *
 * @param approved true to let it run
 * @param decidedBy who decided ({@code elicitation:<client>}, {@code cli:<user>}, {@code key:<key
 *     id>} …)
 * @param reason why, or null
 */
public record ApprovalDecision(boolean approved, String decidedBy, String reason) {}
