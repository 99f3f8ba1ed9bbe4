package dev.pysandbox.packages;

/**
 * Why a requirement or one of its parts is refused, said for a caller. The parsers throw it and
 * {@link Requirement#parse} turns it into {@code invalid_argument} naming the whole spec, so each
 * parser only says what is wrong with the part it reads. Checked, so no parse path forgets to
 * translate it; no stack trace, since it is an answer, not a bug.
 */
final class Refusal extends Exception {
  Refusal(String reason) {
    super(reason, null, false, false);
  }
}
