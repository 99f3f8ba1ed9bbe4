#!/usr/bin/env bash
# The second command of the README: the same set-up, then every test (real bubblewrap, real
# Python, real SQLite, a real MCP client over stdio, and the container backend's tests on Podman's
# Docker API). CI runs exactly this (.ci/run). Arguments go to `mvn verify`.
#
# The container tests get their engine from here (app/src/test/java/dev/pysandbox/TestEngine.java):
# a Podman service in a temporary directory of this run (scripts/podman-service.sh), and the image
# (scripts/build-image.sh), built in the background while Maven compiles and runs the unit tests.
# Its exit status appears in PYSANDBOX_TEST_IMAGE_STATUS, which the integration tests wait for.
# Whatever way this script ends, the build is stopped and the service with it.
#
# scripts/test.sh --fast is the inner loop (docs/DESIGN.md, "Test lanes"): only the test classes
# tagged fast (dev.pysandbox.Fast: pure JVM, no sandbox, no child process, no server), by surefire
# alone; no set-up, no Podman service, no image build, no failsafe, and no format check (run
# `mvn spotless:apply` before a commit; the full lane checks it). Its budget: 90 s on 2 cores with
# the compile. Other arguments go to Maven as above (e.g. -o, -Dtest=...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[test] %s\n' "$*" >&2; }

if [[ ${1:-} == --fast ]]; then
  shift
  say "fast lane: the tests tagged fast, surefire only"
  # C1 only: short pure-JVM tests, where the second compiler's work never paid back (half the CPU).
  exec mvn -B -Dgroups=fast -DskipITs -Dspotless.check.skip=true \
    "-DargLine=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" test "$@"
fi

# The class times that order the forks' queue (runOrder=balanced, pom.xml): always the ones kept in
# git (app/test-times/, from a full run here), as on a clean checkout. Each run rewrites the files
# it reads with the classes it ran only, so a fast-lane or one-class run in between would leave a
# later full run ordered by a fraction of the suite.
for times in unit-times it-times; do
  cp "app/test-times/$times" "app/.surefire-$times"
done

# --no-build: `mvn verify` below builds the jar and its class-data archive (package phase, after
# the unit tests, which need neither); a build in setup.sh as well did all of that twice.
scripts/setup.sh --containers --no-build

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/pysandbox-test.XXXXXX")
service_dir=$run_dir/engine
build_log=$run_dir/image-build.log
build_status=$run_dir/image-build.status
build_pid=

finish() {
  local status=$?
  trap - EXIT INT TERM HUP
  # The whole process group: its leader ends at once, debootstrap and dpkg take a while, and
  # build-image.sh removes its half-made root (and debootstrap unmounts its /proc) after them.
  if [[ -n $build_pid ]] && kill -0 -- "-$build_pid" 2>/dev/null; then
    say "stopping the image build"
    kill -TERM -- "-$build_pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 -- "-$build_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$build_pid" 2>/dev/null || true
  fi
  if [[ -f $build_status ]]; then
    local code seconds
    { read -r code; read -r _; read -r seconds; } <"$build_status" || true
    say "the image build exited $code after ${seconds:-?} s"
    if [[ $code != 0 ]]; then
      say "the end of its log:"
      tail -n 20 "$build_log" >&2 || true
    fi
  fi
  scripts/podman-service.sh stop "$service_dir" || status=1
  rm -rf "$run_dir"
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

docker_host=$(scripts/podman-service.sh start "$service_dir" | sed -n 's/^export DOCKER_HOST=//p')
[[ -n $docker_host ]] || { say "podman-service.sh start printed no DOCKER_HOST"; exit 1; }

# setsid: a process group of its own, which finish ends whole (debootstrap, apt, curl). nice: the
# unit tests running meanwhile come first. The status appears at once, by rename: first line the
# exit status, second the log, third the seconds it took.
DOCKER_HOST=$docker_host setsid nice -n 10 bash -c '
  scripts/build-image.sh >"$1" 2>&1
  printf "%s\n%s\n%s\n" "$?" "$1" "$SECONDS" >"$2.part" && mv "$2.part" "$2"' \
  build-image "$build_log" "$build_status" </dev/null &
build_pid=$!
say "engine $docker_host; building the image in the background (log: $build_log)"

export PYSANDBOX_TEST_DOCKER_HOST=$docker_host PYSANDBOX_TEST_IMAGE_STATUS=$build_status
mvn -B verify "$@"
