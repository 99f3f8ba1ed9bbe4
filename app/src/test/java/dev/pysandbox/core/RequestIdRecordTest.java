package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.core.requests.RequestIds;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.MDC;

/** A run records the id of the request that started it, as the face put it in the MDC. */
@Sandboxed
class RequestIdRecordTest {
  @TempDir Path dataDir;

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aRun_recordsTheRequestId_andOneWithoutARequestRecordsNone() {
    DefaultSandboxService core = TestServices.start(dataDir, Map.of());
    try {
      RunRecord plain = core.run(ExecutionRequest.of("1"));
      MDC.put(RequestIds.MDC_KEY, "req-abc_123");
      RunRecord tagged;
      try {
        tagged = core.forTenant("alice").run(ExecutionRequest.of("2"));
      } finally {
        MDC.remove(RequestIds.MDC_KEY);
      }
      assertThat(tagged.requestId()).isEqualTo("req-abc_123");
      assertThat(core.forTenant("alice").getRun(tagged.runId(), false).requestId())
          .isEqualTo("req-abc_123");
      assertThat(Json.write(tagged)).contains("\"request_id\":\"req-abc_123\"");
      assertThat(core.getRun(plain.runId(), false).requestId()).isNull();
    } finally {
      core.close();
    }
  }
}
