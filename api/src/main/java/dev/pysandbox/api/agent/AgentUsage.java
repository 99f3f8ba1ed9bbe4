package dev.pysandbox.api.agent;

/**
 * What an agent run has spent.
 *
 * @param promptTokens tokens sent to the model
 * @param completionTokens tokens the model answered with
 * @param totalTokens their sum, counted against the token budget
 * @param tokensEstimated whether some of them were estimated (about 4 characters a token) because
 *     the provider gave no figures
 * @param iterations model replies so far (sub-calls not counted)
 * @param subcalls llm_query calls answered
 * @param seconds seconds since it started (until it ended)
 */
public record AgentUsage(
    long promptTokens,
    long completionTokens,
    long totalTokens,
    boolean tokensEstimated,
    int iterations,
    int subcalls,
    double seconds) {
  public static final AgentUsage NONE = new AgentUsage(0, 0, 0, false, 0, 0, 0);
}
