#!/usr/bin/env bash
# Records app/target/pysandbox.jsa, the class-data-sharing archive that makes every start of
# bin/pysandbox faster, from a short MCP session with `serve`. The JVM maps an archive only for the
# jar path and flags it was recorded with, so the session runs through bin/pysandbox itself: the
# path and flags are the launcher's, whatever the working directory later.
# Run by the build right after the jar is shaded (pom.xml, package phase) and by scripts/setup.sh
# when the archive is missing or older than the jar. It never fails: without an archive pysandbox
# starts all the same, only slower. Env: CDS_TRAINING_TIMEOUT=60 (seconds for the whole session).
set -uo pipefail
trap '' PIPE # a server that died early must not kill this script through a write to its stdin
cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/.." || exit 0

say() { printf '[cds] %s\n' "$*" >&2; }

jar=app/target/pysandbox.jar
jsa=app/target/pysandbox.jsa
work=app/target/cds-training
if [[ ! -f "$jar" ]]; then
  say "no $jar: nothing to record"
  exit 0
fi
# The launcher must not map the previous archive while the new one is recorded.
rm -rf "$jsa" "$work"
mkdir -p "$work"

start=$SECONDS
deadline=$((SECONDS + ${CDS_TRAINING_TIMEOUT:-60}))
# A relative archive path: PYSANDBOX_JAVA_OPTS is split on spaces, the checkout's path may have some.
coproc server {
  exec env PYSANDBOX_JAVA_OPTS="-XX:ArchiveClassesAtExit=$work/pysandbox.jsa" \
    bin/pysandbox serve --data-dir "$work/data" 2>"$work/server.log"
}
pid=$server_PID
# Bash forgets a coprocess's descriptors once it has exited; keep copies.
exec {to_server}>&"${server[1]}" {from_server}<&"${server[0]}"
eval "exec ${server[1]}>&- ${server[0]}<&-"

send() { printf '%s\n' "$1" >&"$to_server"; }

# Reads the server's stdout up to the answer with this id; false at end of output or the deadline.
await() {
  local line
  while ((SECONDS < deadline)) && IFS= read -r -t $((deadline - SECONDS)) line <&"$from_server"; do
    [[ "$line" == *"\"id\":$1,"* ]] && return 0
  done
  say "no answer $1 from the training session (see $work/server.log)"
  return 1
}

trained=no
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cds-training","version":"1"}}}' &&
  await 1 &&
  send '{"jsonrpc":"2.0","method":"notifications/initialized"}' &&
  send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' &&
  await 2 &&
  send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"print(1)"}}}' &&
  await 3 &&
  send '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_runs","arguments":{}}}' &&
  await 4 &&
  trained=yes

# End of input: the server exits, and the JVM writes the archive on its way out.
exec {to_server}>&-
while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  say "the training session outlived ${CDS_TRAINING_TIMEOUT:-60} s; stopping it"
  kill -KILL "$pid" 2>/dev/null
  trained=no # the archive is perhaps half written
fi
wait "$pid" 2>/dev/null
exec {from_server}<&-

if [[ $trained == yes && -s "$work/pysandbox.jsa" ]]; then
  mv "$work/pysandbox.jsa" "$jsa"
  say "recorded $jsa for $(realpath "$jar") in $((SECONDS - start)) s"
else
  say "no archive recorded (see $work/server.log); pysandbox will start without one"
fi
exit 0
