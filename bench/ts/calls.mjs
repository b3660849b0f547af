// The TypeScript-SDK client of the MCP client comparison (bench/mcpbench.sh): the official
// Client over StdioClientTransport, calling the demo server's echo tool, with the same
// load shape as `mcpbench calls` (bench/mcpbench/load.go) and the same JSON line out.
//
//   node bench/ts/calls.mjs --command PATH [--arg demo-server]… [-c 16] [-n 20000]
//        [--warmup 500] [--max-seconds 60]
//   node bench/ts/calls.mjs --command PATH [--arg …]… --rss
//
// --rss connects, lists the tools and prints this process's peak RSS instead of calling.
import { readFileSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const ECHO_TEXT = 'hello'

function parseArgs(argv) {
  const o = { command: '', args: [], c: 1, n: 5000, warmup: 500, maxSeconds: 60, rss: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`)
      return argv[++i]
    }
    const count = () => {
      const v = Number(value())
      if (!Number.isInteger(v) || v < 0) throw new Error(`${a} needs a non-negative integer`)
      return v
    }
    switch (a) {
      case '--command': o.command = value(); break
      case '--arg': o.args.push(value()); break
      case '-c': o.c = Math.max(1, count()); break
      case '-n': o.n = count(); break
      case '--warmup': o.warmup = count(); break
      case '--max-seconds': o.maxSeconds = Number(value()); break
      case '--rss': o.rss = true; break
      default: throw new Error(`unknown argument ${a}`)
    }
  }
  if (!o.command) throw new Error('--command PATH (the server) is required')
  if (!o.rss && o.n < 1) throw new Error('-n must be at least 1')
  return o
}

// memory reads VmHWM and VmRSS (KiB) from /proc/self/status.
function memory() {
  const status = readFileSync('/proc/self/status', 'utf8')
  const kib = (key) => {
    const m = status.match(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm'))
    if (!m) throw new Error(`no ${key} in /proc/self/status`)
    return Number(m[1])
  }
  return { vmHWMKiB: kib('VmHWM'), vmRSSKiB: kib('VmRSS') }
}

async function call(client) {
  const res = await client.callTool({ name: 'echo', arguments: { text: ECHO_TEXT } })
  const block = res.content?.[0]
  if (res.isError || res.content?.length !== 1 || block.type !== 'text' || block.text !== ECHO_TEXT) {
    throw new Error(`echo answered ${JSON.stringify(res)}`)
  }
}

// drive makes n calls on c workers (each takes the next call number until none is left)
// and records each latency in nanoseconds at its number; like load.go it stops taking
// calls after the deadline (a bigint from hrtime, or 0n for none).
async function drive(client, n, c, deadline, lat) {
  let next = 0
  const worker = async () => {
    for (;;) {
      if (deadline !== 0n && process.hrtime.bigint() > deadline) return
      const i = next++
      if (i >= n) return
      const t0 = process.hrtime.bigint()
      await call(client)
      if (lat) lat[i] = Number(process.hrtime.bigint() - t0)
    }
  }
  const start = process.hrtime.bigint()
  await Promise.all(Array.from({ length: Math.min(c, n) }, worker))
  return { done: Math.min(next, n), elapsedNs: Number(process.hrtime.bigint() - start) }
}

// percentile is the nearest-rank p-th percentile of sorted (ascending, not empty).
function percentile(sorted, p) {
  const rank = Math.min(Math.max(Math.ceil((sorted.length * p) / 100), 1), sorted.length)
  return sorted[rank - 1]
}

async function main() {
  const o = parseArgs(process.argv.slice(2))
  const transport = new StdioClientTransport({ command: o.command, args: o.args })
  // The client hands the negotiated version to transports that take it (HTTP ones); the
  // stdio transport has no use for it, so record it here.
  let protocol = ''
  transport.setProtocolVersion = (v) => { protocol = v }
  const client = new Client({ name: 'mcpbench-ts', version: '0.0.0' })
  await client.connect(transport)
  try {
    await client.listTools()
    if (o.rss) {
      console.log(JSON.stringify({ kind: 'rss', client: 'ts', host: 'node + @modelcontextprotocol/sdk', servers: 1, ...memory() }))
      return
    }
    if (o.warmup > 0) await drive(client, o.warmup, o.c, 0n, null)
    const lat = new Float64Array(o.n)
    const deadline = o.maxSeconds > 0 ? process.hrtime.bigint() + BigInt(Math.round(o.maxSeconds * 1e9)) : 0n
    const cpu0 = process.cpuUsage()
    const { done, elapsedNs } = await drive(client, o.n, o.c, deadline, lat)
    const cpu = process.cpuUsage(cpu0)
    const sorted = lat.subarray(0, done).sort()
    let sum = 0
    for (const d of sorted) sum += d
    const seconds = elapsedNs / 1e9
    console.log(JSON.stringify({
      kind: 'calls',
      client: 'ts',
      protocol,
      calls: done,
      concurrency: o.c,
      seconds,
      callsPerSec: done / seconds,
      p50Us: percentile(sorted, 50) / 1e3,
      p99Us: percentile(sorted, 99) / 1e3,
      maxUs: sorted[done - 1] / 1e3,
      meanUs: sum / done / 1e3,
      ...(done < o.n ? { truncated: true } : {}),
      clientCPUUsPerCall: (cpu.user + cpu.system) / done,
      ...memory(),
    }))
  } finally {
    await client.close()
  }
}

main().catch((err) => {
  console.error('calls.mjs:', err?.stack ?? err)
  process.exit(1)
})
