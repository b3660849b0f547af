// Cordis side of the side-by-side benchmark (see README.md).
//
// Runs three workloads against the pinned `cordis` package, each a few
// untimed warm-up rounds followed by timed rounds, and prints one JSON line:
//
//   {"cordis":"<version>","node":"<version>","workloads":{"mount":ns,"emit":ns,"inject":ns}}
//
// Every value is the median, in nanoseconds, of the timed rounds of one whole
// workload. Each round checks that the work really happened (apply, effect and
// dispose counts, fiber states, listener calls); any mismatch is reported on
// stderr and the process exits with status 1.
//
// Environment knobs (defaults in brackets):
//   CORDIS_BENCH_RUNS    timed rounds per workload [5]
//   CORDIS_BENCH_WARMUP  warm-up rounds per workload [mount 3, emit 1, inject 3]
//                        (one emit round is 100,000,000 listener calls, far
//                        more than the JIT needs, and takes tens of seconds)
//   CORDIS_BENCH_ONLY    comma-separated subset of mount,emit,inject [all]
//   CORDIS_BENCH_EMIT    "bound" (default): emit through `const emit = ctx.emit`
//                        taken once; "ctx": look up `ctx.emit` on every call
//   CORDIS_BENCH_VERBOSE if set, print every round's time to stderr

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import v8 from 'node:v8'
import vm from 'node:vm'
import { Context, FiberState } from 'cordis'

const MOUNT_PLUGINS = 10_000
const EMIT_LISTENERS = 100
const EMIT_COUNT = 1_000_000
const INJECT_DEPENDENTS = 1_000

const RUNS = positiveInt('CORDIS_BENCH_RUNS', 5)
const WARMUP = {
  mount: nonNegativeInt('CORDIS_BENCH_WARMUP', 3),
  emit: nonNegativeInt('CORDIS_BENCH_WARMUP', 1),
  inject: nonNegativeInt('CORDIS_BENCH_WARMUP', 3),
}
const EMIT_STYLE = process.env.CORDIS_BENCH_EMIT || 'bound'
if (EMIT_STYLE !== 'bound' && EMIT_STYLE !== 'ctx') {
  throw new Error(`CORDIS_BENCH_EMIT must be "bound" or "ctx", got ${JSON.stringify(EMIT_STYLE)}`)
}
const VERBOSE = !!process.env.CORDIS_BENCH_VERBOSE

class CheckError extends Error {
  name = 'CheckError'
}

function check(cond, message) {
  if (!cond) throw new CheckError(message)
}

function positiveInt(name, fallback) {
  const n = nonNegativeInt(name, fallback)
  if (n === 0) throw new Error(`${name} must be at least 1`)
  return n
}

function nonNegativeInt(name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
  return n
}

// A full collection before every round keeps garbage from one round out of the
// next one's timing (Go's testing package does the same before each run).
const collectGarbage = (() => {
  if (typeof globalThis.gc === 'function') return globalThis.gc
  v8.setFlagsFromString('--expose-gc')
  return vm.runInNewContext('gc')
})()

function cordisVersion() {
  const require = createRequire(import.meta.url)
  const path = require.resolve('cordis/package.json')
  return JSON.parse(readFileSync(path, 'utf8')).version
}

function countStates(fibers, state) {
  let n = 0
  for (const fiber of fibers) if (fiber.state === state) n++
  return n
}

// (a) mount: mount 10,000 plugins that each register one effect, wait until all
// of them are ACTIVE, then dispose them all and wait for the disposal.
// Timed: from the first ctx.plugin() call to the end of the last disposal.
async function mountRound() {
  const root = new Context()
  const baseEffects = root.fiber.getEffects().length
  let applied = 0
  let setups = 0
  let disposed = 0
  // One plugin definition mounted 10,000 times: in Cordis v4 every
  // ctx.plugin() call creates an independent fiber that runs the plugin.
  const mounted = (ctx) => {
    applied++
    ctx.effect(() => {
      setups++
      return () => { disposed++ }
    }, 'bench')
  }
  const fibers = new Array(MOUNT_PLUGINS)

  collectGarbage()
  const start = process.hrtime.bigint()
  for (let i = 0; i < MOUNT_PLUGINS; i++) fibers[i] = root.plugin(mounted)
  await Promise.all(fibers)
  const activeAfterMount = countStates(fibers, FiberState.ACTIVE)
  await Promise.all(fibers.map((fiber) => fiber.dispose()))
  const elapsed = process.hrtime.bigint() - start

  check(activeAfterMount === MOUNT_PLUGINS, `mount: ${activeAfterMount}/${MOUNT_PLUGINS} fibers ACTIVE after mounting`)
  check(applied === MOUNT_PLUGINS, `mount: plugin applied ${applied} times, want ${MOUNT_PLUGINS}`)
  check(setups === MOUNT_PLUGINS, `mount: ${setups} effects set up, want ${MOUNT_PLUGINS}`)
  check(disposed === MOUNT_PLUGINS, `mount: ${disposed} effects disposed, want ${MOUNT_PLUGINS}`)
  const disposedFibers = countStates(fibers, FiberState.DISPOSED)
  check(disposedFibers === MOUNT_PLUGINS, `mount: ${disposedFibers}/${MOUNT_PLUGINS} fibers DISPOSED`)
  check(root.fiber.getEffects().length === baseEffects, 'mount: root fiber still holds plugin effects after disposal')
  check(root.registry.get(mounted) === undefined, 'mount: plugin runtime still registered after disposal')
  await root.fiber.dispose()
  return elapsed
}

// (b) emit: one event with 100 listeners, emitted 1,000,000 times. Listeners
// are registered on the root with ctx.on (untimed) and only add to a counter.
// By default the loop calls the emit method taken once from the context
// (`const emit = ctx.emit`, a bound EventsService.emit): every `ctx.emit`
// property read goes through the context Proxy and its accessor mixin, which
// builds an Error (stack capture) per read and costs about 30% more. That is
// Cordis's cheapest public dispatch path, so the comparison does not flatter
// the Go side. CORDIS_BENCH_EMIT=ctx measures the per-call `ctx.emit(...)` form.
// Timed: the 1,000,000 emits.
async function emitRound() {
  const root = new Context()
  let calls = 0
  let sum = 0
  const disposers = []
  for (let i = 0; i < EMIT_LISTENERS; i++) {
    disposers.push(root.on('bench/tick', (n) => {
      calls++
      sum += n
    }))
  }

  let elapsed
  if (EMIT_STYLE === 'ctx') {
    collectGarbage()
    const start = process.hrtime.bigint()
    for (let i = 0; i < EMIT_COUNT; i++) root.emit('bench/tick', 1)
    elapsed = process.hrtime.bigint() - start
  } else {
    const emit = root.emit
    collectGarbage()
    const start = process.hrtime.bigint()
    for (let i = 0; i < EMIT_COUNT; i++) emit('bench/tick', 1)
    elapsed = process.hrtime.bigint() - start
  }

  const want = EMIT_LISTENERS * EMIT_COUNT
  check(calls === want, `emit: ${calls} listener calls, want ${want}`)
  check(sum === want, `emit: listeners summed ${sum}, want ${want}`)
  for (const dispose of disposers) dispose()
  root.emit('bench/tick', 1)
  check(calls === want, 'emit: listeners still called after their disposers ran')
  await root.fiber.dispose()
  return elapsed
}

// (c) inject: 1,000 plugins declaring inject: ['svc'] are mounted and stay
// PENDING (untimed). Then a provider plugin calling ctx.provide('svc', ...)
// is mounted; when it becomes ACTIVE all 1,000 dependents load, and we await
// every one of them. Then the provider fiber is disposed; its provide effect
// only finishes once every dependent has unloaded, and we await the dependents
// again to be sure.
// Timed: provider appears + all dependents ACTIVE + provider leaves + all
// dependents back to PENDING.
async function injectRound() {
  const root = new Context()
  const token = { service: 'svc' }
  let applied = 0
  let sawService = 0
  let disposed = 0
  let providerApplied = 0
  const dependent = {
    name: 'bench-dependent',
    inject: ['svc'],
    apply(ctx) {
      applied++
      if (ctx.svc === token) sawService++
      ctx.effect(() => () => { disposed++ }, 'bench')
    },
  }
  const provider = {
    name: 'bench-provider',
    apply(ctx) {
      providerApplied++
      ctx.provide('svc', token)
    },
  }

  const fibers = new Array(INJECT_DEPENDENTS)
  for (let i = 0; i < INJECT_DEPENDENTS; i++) fibers[i] = root.plugin(dependent)
  await Promise.all(fibers)
  const pendingBefore = countStates(fibers, FiberState.PENDING)
  check(pendingBefore === INJECT_DEPENDENTS, `inject: ${pendingBefore}/${INJECT_DEPENDENTS} dependents PENDING before the provider appears`)
  check(applied === 0, `inject: dependents applied ${applied} times before the provider appeared`)

  collectGarbage()
  const start = process.hrtime.bigint()
  const providerFiber = root.plugin(provider)
  await providerFiber
  await Promise.all(fibers)
  const activeAfterAppear = countStates(fibers, FiberState.ACTIVE)
  await providerFiber.dispose()
  await Promise.all(fibers)
  const elapsed = process.hrtime.bigint() - start

  check(providerApplied === 1, `inject: provider applied ${providerApplied} times, want 1`)
  check(activeAfterAppear === INJECT_DEPENDENTS, `inject: ${activeAfterAppear}/${INJECT_DEPENDENTS} dependents ACTIVE after the provider appeared`)
  check(applied === INJECT_DEPENDENTS, `inject: dependents applied ${applied} times, want ${INJECT_DEPENDENTS}`)
  check(sawService === INJECT_DEPENDENTS, `inject: ${sawService}/${INJECT_DEPENDENTS} dependents read the provided service`)
  check(disposed === INJECT_DEPENDENTS, `inject: ${disposed} dependent effects disposed, want ${INJECT_DEPENDENTS}`)
  check(providerFiber.state === FiberState.DISPOSED, `inject: provider fiber in state ${FiberState[providerFiber.state]}, want DISPOSED`)
  const pendingAfter = countStates(fibers, FiberState.PENDING)
  check(pendingAfter === INJECT_DEPENDENTS, `inject: ${pendingAfter}/${INJECT_DEPENDENTS} dependents PENDING after the provider left`)
  check(root.get('svc') === undefined, 'inject: service still visible after the provider left')

  await Promise.all(fibers.map((fiber) => fiber.dispose()))
  await root.fiber.dispose()
  return elapsed
}

const WORKLOADS = { mount: mountRound, emit: emitRound, inject: injectRound }

function median(values) {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const mid = sorted.length >> 1
  if (sorted.length % 2) return sorted[mid]
  return (sorted[mid - 1] + sorted[mid]) / 2n
}

function selectedWorkloads() {
  const raw = process.env.CORDIS_BENCH_ONLY
  if (!raw) return Object.keys(WORKLOADS)
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean)
  for (const name of names) {
    if (!(name in WORKLOADS)) throw new Error(`CORDIS_BENCH_ONLY: unknown workload ${JSON.stringify(name)}`)
  }
  return names
}

async function main() {
  const results = {}
  for (const name of selectedWorkloads()) {
    const round = WORKLOADS[name]
    for (let i = 0; i < WARMUP[name]; i++) await round()
    const times = []
    for (let i = 0; i < RUNS; i++) {
      const ns = await round()
      times.push(ns)
      if (VERBOSE) process.stderr.write(`${name} run ${i + 1}/${RUNS}: ${(Number(ns) / 1e6).toFixed(3)} ms\n`)
    }
    results[name] = Number(median(times))
  }
  process.stdout.write(JSON.stringify({
    cordis: cordisVersion(),
    node: process.versions.node,
    workloads: results,
  }) + '\n')
}

main().catch((error) => {
  process.stderr.write(`cordis bench failed: ${error instanceof CheckError ? error.message : error?.stack ?? error}\n`)
  process.exit(1)
})
