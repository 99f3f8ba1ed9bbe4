#!/usr/bin/env bash
# The benchmark: pysandbox's figures next to baselines measured in the same run.
# Usage: scripts/bench.sh   (env: BENCH_CALLS=200 one-shot calls, BENCH_WARM_CALLS=1000 calls in
# a session, BENCH_SKIP_SCALE=true skips the 10/100/1000 idle-session memory figures,
# BENCH_ONLY=limits prints only one-shot latency per confinement layer, BENCH_ONLY=load only the
# load figure: executions/s and p50/p99 with 64 sessions and 32 calls in flight from the MCP
# TypeScript SDK's client, BENCH_LOAD_CALLS=10000 calls; app/src/test/node/load.mjs), BENCH_ONLY=startup
# only the start-up time from the checkout and from /, BENCH_STARTS=20 times each;
# BENCH_ONLY=responsiveness only list_runs latency while one sandbox is under attack (busy loop,
# fork bomb, memory hog, output flood, disk filler; BENCH_ATTACK_SECONDS=5 each) and with none;
# BENCH_ONLY=http the HTTP face next to stdio and in-process, same calls (GET /health, ping,
# tools/list, print(1) in a session and one-shot; REST POST /api/v1/runs) from a lean raw client
# (java.net.http, keep-alive) and from the MCP SDK's Java clients, then throughput of `pass` from
# BENCH_HTTP_CLIENTS=16 clients with a session each for BENCH_HTTP_SECONDS=10 s (or
# BENCH_HTTP_LOAD_CALLS=N calls in all; 0 = by time) over MCP HTTP, REST, stdio and in-process with
# where the CPU went, and the server's heap and threads with BENCH_HTTP_IDLE_SESSIONS=1000 idle MCP
# sessions (the servers it starts take PYSANDBOX_JAVA_OPTS, e.g. -XX:TieredStopAtLevel=4);
# BENCH_ONLY=live only live runs: print in the sandbox to the event at the client (1,000 lines
# 2 ms apart, p50/p99) in-process (RunListener), as REST NDJSON and SSE over serve --http, and MCP
# progress's interval and line age; and what streaming costs BENCH_WARM_CALLS warm print(1) runs
# next to the blocking call (in-process and REST);
# BENCH_ONLY=audit what the audit trail costs a warm print(1) in a session (notebooks on, the
# default, next to off; BENCH_WARM_CALLS each), one run's notebook write and runs verify;
# BENCH_ONLY=analysis what validate_code costs in-process on 100 and 1,000 lines of ordinary code
# (BENCH_WARM_CALLS each) next to validate_code("pass") and a warm print(1) in a session, a dry
# run, and the first call of a server (the analysis sandbox's start);
# BENCH_ONLY=packages what packages cost: the first run with a new one-package environment (built
# by pip in a sandbox through the egress proxy, from an index the bench serves on loopback) next to
# the same venv + pip install on the host, a one-shot run in a cached environment next to one
# without packages (BENCH_CALLS), and a warm print(1) in a session with an environment next to one
# without (BENCH_WARM_CALLS);
# BENCH_ONLY=backends the bwrap backend next to the docker backend (issue 17), two services in one
# JVM: create_session from the warm pool and with limits the pool lacks (a sandbox start), the first
# run in a fresh session, close_session, a one-shot run from a refilled pool (BENCH_BACKEND_RUNS=20
# each), warm print(1) in a session (BENCH_WARM_CALLS), and the host memory of an idle session
# (BENCH_IDLE_SESSIONS=10 open: PSS of each sandbox's host processes with its bwrap or conmon, and
# its memory cgroup), with baselines python3 -c pass, bwrap + python3 and docker run --rm through
# the API; the engine is DOCKER_HOST (or BENCH_DOCKER_HOST), e.g. from
# `eval "$(scripts/podman-service.sh start /tmp/benchpod)"`, the image BENCH_DOCKER_IMAGE (default:
# the server's docker_image); a third column for docker_runtime=runsc when a trial container with
# that runtime really runs under gVisor, on BENCH_GVISOR_HOST if given (Podman's Docker API ignores
# a container's runtime: `PYSANDBOX_PODMAN_RUNTIME=runsc scripts/podman-service.sh start DIR`
# starts a service whose default is gVisor), else the reason it is skipped;
# BENCH_ONLY=sandbox-start what one sandbox start costs (BwrapBackend.start to ready, 100 starts)
# with each configuration of BENCH_SETS, taking turns, e.g.
# BENCH_SETS="disk_quota_fs=off,sandbox_uid_range=off;" (the default: plain directory and one
# shared user, then the defaults))
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ "${BENCH_ONLY:-}" == "sandbox-start" ]]; then
  scripts/setup.sh # no baselines to install
else
  scripts/setup.sh --bench
fi
if [[ "${BENCH_ONLY:-}" == "sandbox-start" ]]; then
  # In the reactor, so that the other modules resolve to their classes directories; app is the
  # last module, so the file ends up with its class path.
  mvn -B -q -DskipTests -Dspotless.check.skip=true test-compile dependency:build-classpath \
    -Dmdep.outputFile="$PWD/app/target/test-classpath.txt" -Dmdep.includeScope=test >/dev/null
  exec java -Dbench.set="${BENCH_SETS-disk_quota_fs=off,sandbox_uid_range=off;}" \
    -Dbench.starts="${BENCH_STARTS:-100}" \
    -cp "app/target/test-classes:app/target/classes:$(cat app/target/test-classpath.txt)" \
    dev.pysandbox.bench.StartCost
fi
mvn -B -q -DskipTests -Dspotless.check.skip=true test-compile
exec java -Dbench.only="${BENCH_ONLY:-}" -Dbench.starts="${BENCH_STARTS:-20}" -Dbench.calls="${BENCH_CALLS:-200}" -Dbench.warmCalls="${BENCH_WARM_CALLS:-1000}" \
  -Dbench.loadCalls="${BENCH_LOAD_CALLS:-10000}" -Dbench.attackSeconds="${BENCH_ATTACK_SECONDS:-5}" \
  -Dbench.timeoutRounds="${BENCH_TIMEOUT_ROUNDS:-5}" \
  -Dbench.skipScale="${BENCH_SKIP_SCALE:-false}" -Dbench.httpClients="${BENCH_HTTP_CLIENTS:-16}" \
  -Dbench.httpSeconds="${BENCH_HTTP_SECONDS:-10}" -Dbench.httpLoadCalls="${BENCH_HTTP_LOAD_CALLS:-0}" \
  -Dbench.httpIdleSessions="${BENCH_HTTP_IDLE_SESSIONS:-1000}" \
  -Dbench.backendRuns="${BENCH_BACKEND_RUNS:-20}" -Dbench.idleSessions="${BENCH_IDLE_SESSIONS:-10}" \
  -Dbench.dockerHost="${BENCH_DOCKER_HOST:-}" -Dbench.gvisorHost="${BENCH_GVISOR_HOST:-}" -Dbench.dockerImage="${BENCH_DOCKER_IMAGE:-}" -cp app/target/test-classes:app/target/pysandbox.jar \
  dev.pysandbox.bench.Benchmark bin/pysandbox
