#!/usr/bin/env bash
# The benchmark: pysandbox's figures next to baselines measured in the same run.
# Usage: scripts/bench.sh   (env BENCH_CALLS=200 sets the number of timed calls)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh --bench
mvn -B -q -DskipTests -Dspotless.check.skip=true test-compile
exec java -Dbench.calls="${BENCH_CALLS:-200}" -cp target/test-classes:target/pysandbox.jar \
  dev.pysandbox.bench.Benchmark bin/pysandbox
