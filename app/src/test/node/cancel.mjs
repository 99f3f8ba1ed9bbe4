// A real client abort through the official MCP TypeScript SDK: the SDK sends
// notifications/cancelled for the aborted request, and the server must stop the run.
//
//   node cancel.mjs [--abort-after-ms=1000] [--free-within-ms=5000] [--deadline-s=60] [--] SERVER_CMD...
//   node cancel.mjs [...] [--] http://127.0.0.1:PORT/mcp      (a running server, over Streamable HTTP)
//   (or env CANCEL_ABORT_AFTER_MS, CANCEL_FREE_WITHIN_MS, CANCEL_DEADLINE_S)
//
// Checks, in one session: a 60-second run_python aborted after ~1 s
//  - frees the session: run_python print('after') succeeds within free-within-ms (a session_busy
//    answer is tried again every 200 ms until then);
//  - is recorded as cancelled (list_runs {session_id}, then get_run);
//  - gets no answer after the abort (the spec: a cancelled request is not answered).
// Prints one JSON line on stdout with the findings; exits 1 when a check fails, 2 on bad usage.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, serverTransport, ServerLog, shutdown } from './common.mjs';

const SESSION = 'cancel-1';
const LONG = 'import time\nfor i in range(600): time.sleep(0.1)';

const { options, command } = parseArgs(process.argv.slice(2), {
  'abort-after-ms': ['CANCEL_ABORT_AFTER_MS', 1000],
  'free-within-ms': ['CANCEL_FREE_WITHIN_MS', 5000],
  'deadline-s': ['CANCEL_DEADLINE_S', 60],
});

const log = new ServerLog();
const overHttp = /^https?:\/\//.test(command[0]);
const transport = overHttp ? new StreamableHTTPClientTransport(new URL(command[0])) : serverTransport(command, log);
// What the transport reports besides messages (over HTTP: failed POSTs and stream reconnections).
const transportErrors = [];

// Watch the wire both ways. The SDK's Protocol.connect keeps an onmessage set before it and calls
// it first, so every message the server sends passes here.
const t0 = performance.now();
const since = () => Math.round(performance.now() - t0);
let longId = null;
let abortedAt = null;
let cancelSent = false;
const late = [];
transport.onmessage = (message) => {
  if (longId !== null && message.id === longId && ('result' in message || 'error' in message)) {
    const answer = message.result?.structuredContent ?? message.result ?? message.error;
    const seen = { at_ms: since(), answer: JSON.stringify(answer).slice(0, 300) };
    if (abortedAt === null) {
      findings.answered_before_abort = seen;
    } else {
      late.push({ ...seen, ms_after_abort: Math.round(performance.now() - abortedAt) });
    }
  }
};
const send = transport.send.bind(transport);
transport.send = (message, opts) => {
  if (message.method === 'tools/call' && message.params?.arguments?.code === LONG) {
    longId = message.id;
  }
  if (message.method === 'notifications/cancelled' && longId !== null && message.params?.requestId === longId) {
    cancelSent = true;
  }
  return send(message, opts);
};

const client = new Client({ name: 'pysandbox-cancel', version: '1' });
client.onerror = (e) => transportErrors.push(String(e?.message ?? e).slice(0, 300));
const findings = { ok: false, failures: [] };
const fail = (why) => findings.failures.push(why);

let finished = false;
async function finish() {
  if (finished) {
    return;
  }
  finished = true;
  clearTimeout(deadline);
  findings.cancel_sent = cancelSent;
  findings.late_answers = late;
  findings.transport = overHttp ? 'http' : 'stdio';
  findings.transport_errors = transportErrors;
  if (abortedAt !== null && !cancelSent) {
    fail('the SDK sent no notifications/cancelled for the aborted request');
  }
  if (late.length > 0) {
    fail(`the aborted request ${longId} was answered ${late[0].ms_after_abort} ms after the abort: ${late[0].answer}`);
  }
  findings.ok = findings.failures.length === 0;
  findings.seconds = Math.round(since() / 10) / 100;
  process.stdout.write(JSON.stringify(findings) + '\n');
  if (!findings.ok) {
    log.dump('cancel.mjs');
  }
  await shutdown(client, transport);
  process.exit(findings.ok ? 0 : 1);
}

const deadline = setTimeout(() => {
  fail(`deadline of ${options['deadline-s']} s passed`);
  finish();
}, options['deadline-s'] * 1000);

async function tool(name, args, timeout = 10000) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout });
  return { res, sc: res.structuredContent ?? {} };
}

try {
  await client.connect(transport);
  const created = await tool('create_session', { session_id: SESSION }, 30000);
  if (created.res.isError) {
    throw new Error(`create_session: ${JSON.stringify(created.sc)}`);
  }

  // 1. The abort: the SDK rejects the call at once and sends notifications/cancelled.
  const controller = new AbortController();
  const long = client.callTool(
    { name: 'run_python', arguments: { session_id: SESSION, code: LONG } },
    undefined,
    { signal: controller.signal, timeout: 120000 },
  );
  await sleep(options['abort-after-ms']);
  abortedAt = performance.now();
  findings.aborted_at_ms = since();
  controller.abort('pysandbox cancel.mjs: the user pressed Esc');
  try {
    const r = await long;
    fail(`the aborted call resolved instead of rejecting: ${JSON.stringify(r.structuredContent ?? r).slice(0, 300)}`);
  } catch (e) {
    findings.abort_error = String(e?.message ?? e);
  }
  if (findings.answered_before_abort) {
    fail(`the long run answered before the abort: ${findings.answered_before_abort.answer}`);
  }

  // 2. The session is free again soon.
  const after = { attempts: 0, busy: 0 };
  findings.after = after;
  const until = performance.now() + options['free-within-ms'];
  for (;;) {
    after.attempts++;
    const t = performance.now();
    const { res, sc } = await tool('run_python', { session_id: SESSION, code: "print('after')" });
    if (!res.isError && sc.status === 'succeeded' && sc.stdout === 'after\n') {
      after.run_id = sc.run_id;
      after.ms_after_abort = Math.round(performance.now() - abortedAt);
      after.call_ms = Math.round(performance.now() - t);
      break;
    }
    const code = sc.error?.code;
    if (res.isError && code === 'session_busy' && performance.now() < until) {
      after.busy++;
      await sleep(200);
      continue;
    }
    fail(
      `run_python print('after') in ${SESSION}, ${Math.round(performance.now() - abortedAt)} ms after the abort` +
        ` (attempt ${after.attempts}): ${res.isError ? 'error ' + JSON.stringify(sc.error) : 'status ' + sc.status}`,
    );
    break;
  }

  // 3. The aborted run is recorded as cancelled.
  const listed = await tool('list_runs', { session_id: SESSION, limit: 20 });
  const first = (listed.sc.runs ?? []).find((r) => r.run_id !== after.run_id && String(r.code_preview ?? '').startsWith('import time'));
  if (!first) {
    fail(`list_runs {session_id: ${SESSION}} has no run of the long code: ${JSON.stringify(listed.sc).slice(0, 300)}`);
  } else {
    const got = await tool('get_run', { run_id: first.run_id });
    findings.first_run = { run_id: first.run_id, listed_status: first.status, status: got.sc.status };
    if (first.status !== 'cancelled' || got.sc.status !== 'cancelled') {
      fail(`the aborted run ${first.run_id} is ${first.status} in list_runs and ${got.sc.status} in get_run, not cancelled`);
    }
  }

  // 4. A moment more to see a late answer to the aborted request, should one come.
  await sleep(500);
} catch (e) {
  fail(`${e?.message ?? e}`);
}
await finish();
