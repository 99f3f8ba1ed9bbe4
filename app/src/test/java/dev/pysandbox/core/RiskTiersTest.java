package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.SharedServiceTest;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.core.approvals.ApprovalPolicy;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The severity tiers users of such tools know (issue 23, item 14), through the real analysis
 * sandbox: a call that runs a program and eval/exec/compile of anything not a constant are
 * critical, importing a module that runs programs is high, file writes medium, environment reads
 * low — each case of the corpus's {@code tiers} exactly at its tier; and what each {@code
 * approval_threshold} then holds: the default (high) holds every case at high or critical, so no
 * run it held before the tiers is let through.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RiskTiersTest extends SharedServiceTest {

  static Stream<Arguments> tiers() throws IOException {
    List<Arguments> cases = new ArrayList<>();
    for (JsonNode c : CodeAnalysisTest.corpus().path("tiers")) {
      cases.add(
          Arguments.of(
              c.path("name").asText(), c.path("code").asText(), c.path("severity").asText()));
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tiers")
  void validate_eachCaseOfTheTiers_hasExactlyItsTierAsMaxSeverity(
      String name, String code, String severity) {
    ValidationReport r = service.validateCode(code);

    assertThat(r.maxSeverity()).as(name + ": " + r.riskFindings()).isEqualTo(severity);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tiers")
  void approvalThreshold_holdsEachCaseExactlyWhenItsTierIsAtOrAboveTheThreshold(
      String name, String code, String severity) {
    for (String threshold : RiskFinding.SEVERITIES) {
      ApprovalPolicy approvals = approvals(threshold);

      ApprovalPolicy.Verdict v = approvals.verdict(new ExecutionRequest(code, null, null, 30));

      assertThat(v.mustWait())
          .as("%s (%s) at approval_threshold=%s: %s", name, severity, threshold, v.why())
          .isEqualTo(RiskFinding.rank(severity) >= RiskFinding.rank(threshold));
    }
  }

  /** The verdict of approval_policy=findings at {@code threshold}, on the service's analysis. */
  private ApprovalPolicy approvals(String threshold) {
    Map<String, String> settings =
        threshold.equals("high")
            ? Map.of("approval_policy", "findings") // the default threshold, as shipped
            : Map.of("approval_policy", "findings", "approval_threshold", threshold);
    return new ApprovalPolicy(TestServices.config(dataDir, settings), service.core().analysis);
  }
}
