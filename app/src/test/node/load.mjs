// Load through the official MCP TypeScript SDK (the client Claude Code uses): N sessions, K
// run_python calls in flight (never two at once in one session), every answer checked.
//
//   node load.mjs [--sessions=64] [--in-flight=32] [--calls=10000] [--call-timeout-ms=60000]
//                 [--deadline-s=300] [--max-errors=1] [--] SERVER_CMD...
//   (or env LOAD_SESSIONS, LOAD_IN_FLIGHT, LOAD_CALLS, LOAD_CALL_TIMEOUT_MS, LOAD_DEADLINE_S,
//   LOAD_MAX_ERRORS: after that many wrong or unanswered calls no new call starts, and the calls
//   in flight are waited for: a stuck server fails the run after one call timeout, not one per
//   round of calls)
//
// Each call increments a per-session counter in Python and returns it as the trailing
// expression, so a lost, duplicated or crossed answer shows as a wrong count. Prints one JSON
// line on stdout: {calls, ok, wrong, errors, missing, first_errors, seconds, per_second, p50_ms,
// p99_ms, ...}; exits 1 unless every call was answered right, 2 on bad usage. The server needs
// max_sessions >= sessions (plus the pool's headroom): `--set max_sessions=80`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { performance } from 'node:perf_hooks';
import { parseArgs, serverTransport, ServerLog, shutdown, summary } from './common.mjs';

const CODE = "n = globals().get('n', 0) + 1\nn";

const { options, command } = parseArgs(process.argv.slice(2), {
  sessions: ['LOAD_SESSIONS', 64],
  'in-flight': ['LOAD_IN_FLIGHT', 32],
  calls: ['LOAD_CALLS', 10000],
  'call-timeout-ms': ['LOAD_CALL_TIMEOUT_MS', 60000],
  'deadline-s': ['LOAD_DEADLINE_S', 300],
  'max-errors': ['LOAD_MAX_ERRORS', 1],
});
const sessions = options.sessions;
const inFlight = options['in-flight'];
const calls = options.calls;
if (inFlight > sessions || inFlight < 1 || sessions < 1) {
  console.error(`load.mjs: need 1 <= in-flight (${inFlight}) <= sessions (${sessions})`);
  process.exit(2);
}

const log = new ServerLog();
const transport = serverTransport(command, log);
const client = new Client({ name: 'pysandbox-load', version: '1' });

const stats = { ok: 0, wrong: 0, errors: 0, firstErrors: [], latencies: [] };
let started = 0;
let createRetries = 0;
const tStart = performance.now();
let t0 = tStart;
let setupSeconds = null;

function problem(kind, text) {
  stats[kind]++;
  note(text);
}

/** A failure that is not a call's (setup, the deadline): reported, and the run fails. */
function note(text) {
  if (stats.firstErrors.length < 5) {
    stats.firstErrors.push(text);
  }
}

function report() {
  const seconds = (performance.now() - t0) / 1000;
  const answered = stats.ok + stats.wrong + stats.errors;
  return {
    calls,
    ok: stats.ok,
    wrong: stats.wrong,
    errors: stats.errors,
    missing: calls - answered,
    first_errors: stats.firstErrors,
    seconds: round(seconds),
    per_second: round(stats.ok / seconds),
    ...summary(stats.latencies),
    sessions,
    in_flight: inFlight,
    setup_seconds: setupSeconds,
    create_retries: createRetries,
  };
}

function round(x) {
  return Math.round(x * 100) / 100;
}

// The whole run has a deadline: whatever the server does, this script ends and says why.
const deadline = setTimeout(async () => {
  const inFlightNow = started - stats.ok - stats.wrong - stats.errors;
  note(`deadline of ${options['deadline-s']} s passed ${setupSeconds === null ? 'during setup' : `with ${inFlightNow} calls in flight`}`);
  await finish(1);
}, options['deadline-s'] * 1000);

let finished = false;
async function finish(code) {
  if (finished) {
    return;
  }
  finished = true;
  clearTimeout(deadline);
  process.stdout.write(JSON.stringify(report()) + '\n');
  if (code !== 0) {
    log.dump('load.mjs');
  }
  await shutdown(client, transport);
  process.exit(code);
}

async function call(sessionId, expected) {
  const t = performance.now();
  let res;
  try {
    res = await client.callTool(
      { name: 'run_python', arguments: { session_id: sessionId, code: CODE } },
      undefined,
      { timeout: options['call-timeout-ms'] },
    );
  } catch (e) {
    problem('errors', `${sessionId} call ${expected}: ${e?.message ?? e}`);
    return false;
  }
  const ms = performance.now() - t;
  const sc = res.structuredContent ?? {};
  const got = sc.result?.['text/plain'];
  if (!res.isError && sc.status === 'succeeded' && got === String(expected)) {
    stats.ok++;
    stats.latencies.push(ms);
    return true;
  }
  const text = String(res.content?.[0]?.text ?? '').slice(0, 300);
  const why = res.isError
    ? `tool error ${JSON.stringify(sc.error ?? text)}`
    : `status ${sc.status}, result ${JSON.stringify(got)}: ${JSON.stringify(text)}`;
  problem(res.isError ? 'errors' : 'wrong', `${sessionId} call ${expected}: expected ${expected}, got ${why}`);
  return false;
}

// A retryable refusal (a sandbox that failed to start, say) is tried again, as a client would.
async function createSession(id) {
  for (let attempt = 1; ; attempt++) {
    const res = await client.callTool(
      { name: 'create_session', arguments: { session_id: id } },
      undefined,
      { timeout: options['call-timeout-ms'] },
    );
    if (!res.isError) {
      return;
    }
    const error = res.structuredContent?.error;
    if (!error?.retryable || attempt === 3) {
      throw new Error(`create_session ${id} (attempt ${attempt}): ${JSON.stringify(error ?? res.content)}`);
    }
    createRetries++;
  }
}

try {
  await client.connect(transport);
  for (let i = 0; i < sessions; i++) {
    await createSession(`load-${i}`);
  }
} catch (e) {
  note(`setup: ${e?.message ?? e}`);
  await finish(1);
}

// Idle sessions wait here; a worker takes one, makes one call, and gives it back. A session
// whose answer was wrong or missing is retired: its counter is no longer known.
const idle = Array.from({ length: sessions }, (_, i) => ({ id: `load-${i}`, count: 0 }));
async function worker() {
  while (started < calls && !finished && stats.wrong + stats.errors < options['max-errors']) {
    const session = idle.shift();
    if (!session) {
      return; // only when sessions were retired: fewer calls in flight from now on
    }
    started++;
    session.count++;
    if (await call(session.id, session.count)) {
      idle.push(session);
    }
  }
}

t0 = performance.now();
setupSeconds = round((t0 - tStart) / 1000);
await Promise.all(Array.from({ length: inFlight }, worker));
await finish(stats.ok === calls ? 0 : 1);
