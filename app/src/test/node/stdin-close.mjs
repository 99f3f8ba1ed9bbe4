// The end of a `serve --http --stdio` server as the official MCP TypeScript SDK makes it: a run in
// flight over REST (HTTP) and one over stdio, then client.close(), which ends the server's stdin,
// waits 2 s, sends SIGTERM, waits 2 s more and sends SIGKILL.
//
//   node stdin-close.mjs [--deadline-s=90] [--] SERVER_CMD...
//   (SERVER_CMD: serve --http --stdio --port 0 --set http_auth=none ...)
//
// Prints one JSON line on stdout: the two run ids, how the server process ended (exit code or
// signal) and what the HTTP request was answered. The caller reads the records afterwards.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, serverTransport, ServerLog } from './common.mjs';

const SLEEP = 'import time\ntime.sleep(600)';

const { options, command } = parseArgs(process.argv.slice(2), {
  'deadline-s': ['STDIN_CLOSE_DEADLINE_S', 90],
});

const log = new ServerLog();
const transport = serverTransport(command, log);
const report = { ok: false, failures: [] };
const fail = (why) => report.failures.push(why);
const deadline = setTimeout(() => {
  fail(`deadline of ${options['deadline-s']} s passed`);
  done();
}, options['deadline-s'] * 1000);

function done() {
  clearTimeout(deadline);
  report.ok = report.failures.length === 0;
  process.stdout.write(JSON.stringify(report) + '\n');
  if (!report.ok) {
    log.dump('stdin-close.mjs');
  }
  process.exit(report.ok ? 0 : 1);
}

/** The URL the server prints on stderr ("listening on http://..."). */
async function serverUrl() {
  for (;;) {
    const line = log.lines.find((l) => l.includes('listening on '));
    if (line) {
      return line.slice(line.indexOf('listening on ') + 'listening on '.length).trim();
    }
    await sleep(50);
  }
}

async function runningRuns(api) {
  const r = await fetch(`${api}/runs?status=running`);
  const body = await r.json();
  return (body.runs ?? []).map((run) => run.run_id);
}

try {
  const client = new Client({ name: 'pysandbox-stdin-close', version: '1' });
  await client.connect(transport);
  const child = transport._process;
  const ended = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const api = (await serverUrl()) + '/api/v1';

  const httpAnswer = fetch(`${api}/runs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code: SLEEP, description: 'over http' }),
  })
    .then(async (r) => ({ status: r.status, body: await r.json() }))
    .catch((e) => ({ error: String(e?.message ?? e) }));
  let httpRun = [];
  while (httpRun.length === 0) {
    await sleep(100);
    httpRun = await runningRuns(api);
  }
  report.http_run_id = httpRun[0];

  client
    .callTool({ name: 'run_python', arguments: { code: SLEEP, description: 'over stdio' } }, undefined, {
      timeout: 120000,
    })
    .catch(() => {});
  let both = [];
  while (both.length < 2) {
    await sleep(100);
    both = await runningRuns(api);
  }
  report.stdio_run_id = both.find((id) => id !== report.http_run_id);

  const closing = Date.now();
  await client.close();
  report.process = await ended;
  report.ended_after_ms = Date.now() - closing;
  const answer = await httpAnswer;
  report.http_answer = answer.error ?? { status: answer.status, run_status: answer.body?.status };
} catch (e) {
  fail(`${e?.message ?? e}`);
}
done();
