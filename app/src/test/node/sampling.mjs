// An agent run whose model is this client's own (sampling/createMessage), through the official
// MCP TypeScript SDK: the client declares sampling, answers the first request with code and the
// second (which must carry the code's output) with the answer.
//
//   node sampling.mjs [--deadline-s=60] [--] SERVER_CMD...
//   node sampling.mjs [...] [--] http://127.0.0.1:PORT/mcp      (a running server, Streamable HTTP)
//
// Prints one JSON line on stdout with the findings; exits 1 when a check fails, 2 on bad usage.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseArgs, serverTransport, ServerLog, shutdown } from './common.mjs';

const { options, command } = parseArgs(process.argv.slice(2), {
  'deadline-s': ['SAMPLING_DEADLINE_S', 60],
});

const log = new ServerLog();
const overHttp = /^https?:\/\//.test(command[0]);
const transport = overHttp
  ? new StreamableHTTPClientTransport(new URL(command[0]))
  : serverTransport(command, log);
const client = new Client({ name: 'pysandbox-sampling', version: '1' }, { capabilities: { sampling: {} } });
const findings = { ok: false, failures: [], sampled: [] };
const fail = (why) => findings.failures.push(why);

client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  const messages = request.params.messages;
  const last = messages[messages.length - 1]?.content?.text ?? '';
  findings.sampled.push({ messages: messages.length, last: last.slice(0, 200) });
  const text =
    findings.sampled.length === 1
      ? "```python\nprint('ts says', 7 * 6)\n```"
      : last.includes('ts says 42')
        ? 'The answer is 42.'
        : 'I did not see the output.';
  return { role: 'assistant', content: { type: 'text', text }, model: 'ts-model' };
});

const deadline = setTimeout(() => {
  fail(`no end within ${options['deadline-s']} s`);
  done(1);
}, options['deadline-s'] * 1000);

async function done(code) {
  clearTimeout(deadline);
  findings.transport = overHttp ? 'http' : 'stdio';
  findings.ok = findings.failures.length === 0;
  console.log(JSON.stringify(findings));
  if (findings.failures.length && !overHttp) {
    log.dump('sampling.mjs');
  }
  await shutdown(client, transport);
  process.exit(code ?? (findings.ok ? 0 : 1));
}

try {
  await client.connect(transport);
  const r = await client.callTool(
    { name: 'agent_run', arguments: { task: 'compute 7*6 with Python', wait_seconds: 60 } },
    undefined,
    { timeout: options['deadline-s'] * 1000 },
  );
  const run = r.structuredContent ?? {};
  findings.status = run.status;
  findings.answer = run.answer;
  findings.steps = (run.steps ?? []).length;
  findings.model = run.model;
  if (run.status !== 'succeeded') fail(`status ${run.status}: ${run.stop_reason}`);
  if (run.answer !== 'The answer is 42.') fail(`answer ${JSON.stringify(run.answer)}`);
  if (findings.sampled.length !== 2) fail(`sampled ${findings.sampled.length} times`);
  await done();
} catch (e) {
  fail(String(e?.stack ?? e).slice(0, 500));
  await done(1);
}
