// What load.mjs and cancel.mjs share: options, starting the server, its stderr, shutting down,
// percentiles.

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * The server started over stdio as a client would, with this process's whole environment (the SDK
 * otherwise passes only a short list), its stderr kept by `log`.
 */
export function serverTransport(command, log) {
  const transport = new StdioClientTransport({
    command: command[0],
    args: command.slice(1),
    env: { ...process.env },
    stderr: 'pipe',
  });
  log.attach(transport);
  return transport;
}

/**
 * Options before the server command: `--name=value` or `--name value` for the names in `spec`
 * ({name: [ENV_VAR, default]}), then an optional `--`; the rest is the server command. A value
 * comes from the flag, else the environment variable, else the default; all are integers.
 */
export function parseArgs(argv, spec) {
  const options = {};
  for (const [name, [env, def]] of Object.entries(spec)) {
    options[name] = process.env[env] !== undefined ? Number(process.env[env]) : def;
  }
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      i++;
      break;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !(m[1] in spec)) {
      break;
    }
    options[m[1]] = Number(m[2] ?? argv[++i]);
  }
  const command = argv.slice(i);
  const bad = Object.entries(options).filter(([, v]) => !Number.isInteger(v) || v < 0);
  if (command.length === 0 || bad.length > 0) {
    const flags = Object.entries(spec)
      .map(([name, [env, def]]) => `[--${name}=${def}] (env ${env})`)
      .join(' ');
    console.error(
      (bad.length ? `bad value for ${bad.map(([k]) => '--' + k).join(', ')}\n` : '') +
        `usage: node ${process.argv[1]} ${flags} [--] SERVER_CMD...`,
    );
    process.exit(2);
  }
  return { options, command };
}

/** Keeps the last lines of the server's stderr, to show when something went wrong. */
export class ServerLog {
  constructor(keep = 60) {
    this.keep = keep;
    this.lines = [];
    this.partial = '';
  }

  attach(transport) {
    transport.stderr.on('data', (chunk) => {
      const parts = (this.partial + chunk.toString('utf8')).split('\n');
      this.partial = parts.pop();
      this.lines.push(...parts);
      if (this.lines.length > this.keep) {
        this.lines.splice(0, this.lines.length - this.keep);
      }
    });
  }

  dump(who) {
    const tail = [...this.lines, this.partial].filter((l) => l.length > 0);
    console.error(`${who}: last ${tail.length} lines of the server's stderr:`);
    for (const line of tail) {
      console.error(`  | ${line}`);
    }
  }
}

/**
 * Closes the client (the SDK ends the server's stdin, then SIGTERM, then SIGKILL, 2 s apart);
 * kills the server outright if that has not finished in 6 s.
 */
export async function shutdown(client, transport) {
  const pid = transport.pid;
  let closed = false;
  const onclose = client.onclose;
  client.onclose = () => {
    closed = true;
    onclose?.();
  };
  await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 6000).unref())]);
  if (!closed && typeof pid === 'number') {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** p50 and p99 (nearest rank) of the latencies, in ms. */
export function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const pct = (p) => (s.length === 0 ? null : Math.round(s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] * 100) / 100);
  return { p50_ms: pct(50), p99_ms: pct(99) };
}
