package dev.pysandbox.http;

import static dev.pysandbox.http.RestFace.tree;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /metrics} scraped from the HTTP face after real runs, sessions and environment builds, and
 * read as Prometheus text: every value checked against what was done, not only its presence.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Sandboxed
class HttpMetricsTest {
  /** One sample line: a name, its labels, a value. */
  private static final Pattern SAMPLE =
      Pattern.compile(
          "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(?:[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\]|\\\\.)*\",?)*\\})?"
              + " (\\S+)");

  @TempDir static Path dataDir;
  @TempDir static Path wheels;
  SimpleIndex index;
  RestFace http;

  @BeforeAll
  void start() throws Exception {
    TinyWheels.build(wheels, "metricpkg", "1.0");
    index = SimpleIndex.serve(wheels);
    http =
        RestFace.start(
            dataDir,
            Map.of(
                "pool_size",
                "1",
                "max_sessions",
                "6",
                "index_url",
                index.url().toString(),
                "network_allow_private",
                "true"));
  }

  @AfterAll
  void stop() {
    if (http != null) {
      http.close();
    }
    if (index != null) {
      index.close();
    }
  }

  /** The samples of a scrape, by series as written ({@code name{a="x",b="y"}}). */
  private Map<String, Double> scrape() throws Exception {
    HttpResponse<String> r = http.get("/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    Map<String, Double> samples = new LinkedHashMap<>();
    for (String line : r.body().split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("a Prometheus sample line: %s", line).isTrue();
      String series = m.group(1) + (m.group(2) == null ? "" : m.group(2));
      samples.put(series, Double.parseDouble(m.group(3)));
    }
    return samples;
  }

  private static double value(Map<String, Double> samples, String series) {
    Double v = samples.get(series);
    assertThat(v).as("%s in %s", series, samples.keySet()).isNotNull();
    return v;
  }

  /** How much a counter grew between two scrapes (from 0 when it was not there before). */
  private static double grew(Map<String, Double> before, Map<String, Double> after, String series) {
    return value(after, series) - before.getOrDefault(series, 0.0);
  }

  private static double sum(Map<String, Double> samples, String prefix) {
    return samples.entrySet().stream()
        .filter(e -> e.getKey().startsWith(prefix))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }

  private String run(Map<String, Object> body, String status) throws Exception {
    HttpResponse<String> r = http.post("/api/v1/runs", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    assertThat(tree(r).path("status").asText()).as(r.body()).isEqualTo(status);
    return tree(r).path("run_id").asText();
  }

  /**
   * Regression: {@code pysandbox_sessions_open} was {@code NaN} with sessions open, once the
   * collector had taken the lambda its gauge was registered on (Micrometer holds it weakly).
   */
  @Test
  void metrics_afterRealRunsSessionsAndBuilds_countEachByItsLabels() throws Exception {
    Map<String, Double> b = scrape();
    for (String id : List.of("m-1", "m-2")) {
      assertThat(http.post("/api/v1/sessions", Map.of("session_id", id)).statusCode())
          .isEqualTo(200);
    }
    String ok = run(Map.of("code", "1 + 1"), "succeeded");
    run(Map.of("code", "print(2)", "session_id", "m-1"), "succeeded");
    run(Map.of("code", "raise ValueError('no')"), "failed");
    run(Map.of("code", "import time\ntime.sleep(30)", "timeout_seconds", 1), "timed_out");
    run(Map.of("code", "import metricpkg", "packages", List.of("metricpkg==1.0")), "succeeded");
    run(Map.of("code", "import metricpkg", "packages", List.of("metricpkg==1.0")), "succeeded");
    HttpResponse<String> missing =
        http.post("/api/v1/runs", Map.of("code", "1", "packages", List.of("metricpkg==9.9")));
    assertThat(missing.statusCode()).as(missing.body()).isNotEqualTo(201);
    for (int i = 0; i < 3; i++) {
      assertThat(http.get("/api/v1/runs/" + ok).statusCode()).isEqualTo(200);
    }
    String tier = tree(http.get("/api/v1/runs/" + ok)).path("tier").asText();
    System.gc(); // what took the gauge's state object before
    Map<String, Double> m = scrape();

    assertThat(value(m, "pysandbox_sessions_open")).isEqualTo(2.0);
    String t = ",tier=\"" + tier + "\"}";
    assertThat(grew(b, m, "pysandbox_runs_total{status=\"succeeded\"" + t)).isEqualTo(4.0);
    assertThat(grew(b, m, "pysandbox_runs_total{status=\"failed\"" + t)).isEqualTo(1.0);
    assertThat(grew(b, m, "pysandbox_runs_total{status=\"timed_out\"" + t)).isEqualTo(1.0);
    String duration = "pysandbox_run_duration_seconds_";
    assertThat(grew(b, m, duration + "count{tier=\"" + tier + "\"}")).isEqualTo(6.0);
    assertThat(grew(b, m, duration + "bucket{tier=\"" + tier + "\",le=\"+Inf\"}")).isEqualTo(6.0);
    assertThat(grew(b, m, duration + "bucket{tier=\"" + tier + "\",le=\"0.5\"}"))
        .as("the timed-out run took a second at least")
        .isLessThanOrEqualTo(5.0);
    assertThat(grew(b, m, "pysandbox_environment_builds_total{outcome=\"built\"}")).isEqualTo(1.0);
    assertThat(grew(b, m, "pysandbox_environment_builds_total{outcome=\"reused\"}")).isEqualTo(1.0);
    assertThat(grew(b, m, "pysandbox_environment_builds_total{outcome=\"failed\"}")).isEqualTo(1.0);
    assertThat(grew(b, m, "pysandbox_environment_build_duration_seconds_count")).isEqualTo(1.0);
    // Fresh sandboxes taken: two sessions and five one-shot runs (the session's run uses its
    // session's; the run whose environment failed never got as far).
    String takes = "pysandbox_pool_wait_seconds_count{";
    assertThat(sum(m, takes) - sum(b, takes)).as("%s then %s", b, m).isEqualTo(7.0);
    assertThat(value(m, "pysandbox_sandbox_starts_total{outcome=\"failed\"}")).isZero();
    assertThat(value(m, "pysandbox_sandbox_starts_total{outcome=\"started\"}"))
        .isEqualTo(value(m, "pysandbox_sandbox_start_duration_seconds_count"));
    assertThat(value(m, "pysandbox_pool_size")).isEqualTo(1.0);
    assertThat(value(m, "pysandbox_pool_ready")).isBetween(0.0, 1.0);
    assertThat(value(m, "pysandbox_runs_in_flight")).isZero();
    assertThat(value(m, "pysandbox_runs_waiting")).isZero();
    assertThat(
            grew(
                b,
                m,
                "http_server_requests_seconds_count{method=\"GET\",route=\"/api/v1/runs/{run_id}\","
                    + "status=\"200\"}"))
        .isEqualTo(4.0);
    assertThat(m.keySet())
        .as("routes by template, never a path as sent")
        .noneMatch(k -> k.contains("route=\"/api/v1/runs/run_"))
        .noneMatch(k -> k.contains("route=\"/api/v1/*\""));
    assertThat(m.entrySet())
        .as("no pysandbox gauge is NaN")
        .noneMatch(e -> e.getKey().startsWith("pysandbox_") && e.getValue().isNaN());
  }

  @Test
  void runsInFlight_countsARunWhileItRuns() throws Exception {
    CompletableFuture<HttpResponse<String>> running =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return http.post(
                    "/api/v1/runs",
                    Map.of("code", "import time\nprint('on', flush=True)\ntime.sleep(3)"));
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    Await.until(
        "the run is in flight in the metrics",
        () -> {
          try {
            return scrape().get("pysandbox_runs_in_flight");
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        v -> v != null && v == 1.0);
    assertThat(running.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    assertThat(value(scrape(), "pysandbox_runs_in_flight")).isZero();
  }
}
