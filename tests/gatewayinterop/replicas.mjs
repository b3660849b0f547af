// Many sessions of the TypeScript SDK client calling through a load balancer, for the
// replica tests (replicas_test.go). Usage: node replicas.mjs URL TOKEN SESSIONS CALLS TOOL ARGS
// Each of SESSIONS sessions connects to URL and makes CALLS calls of TOOL with ARGS (JSON),
// one after the other. Every call is reported on stdout as one JSON line as soon as it ends:
// {"session": i, "call": n, "start": ms, "end": ms, "ok": bool, "error": message,
//  "replica": the X-Harness-Replica of its answer ("" when it got none),
//  "before": the replica of the session's last answer before it}
// Times are milliseconds since the epoch (Date.now()), comparable with the test's clock. A
// line "READY" comes once every session has initialized, and "DONE" at the end.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, sessionsArg, callsArg, tool, argsJSON] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const calls = Number(callsArg);
const args = JSON.parse(argsJSON);

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

async function session(i) {
  // The replica of each answer, from the response headers the SDK's fetch sees.
  let last = "";
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      const r = res.headers.get("x-harness-replica");
      if (r && (init?.method ?? "GET") === "POST") last = r;
      return res;
    },
  });
  const client = new Client({ name: `replicas-${i}`, version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, replica: () => last };
}

const all = await Promise.all(Array.from({ length: sessions }, (_, i) => session(i)));
emit("READY");
await Promise.all(all.map(async (s, i) => {
  for (let n = 0; n < calls; n++) {
    const before = s.replica();
    const start = Date.now();
    let ok = false;
    let error = "";
    let replica = "";
    try {
      const res = await s.client.callTool({ name: tool, arguments: args });
      ok = !res.isError;
      if (res.isError) error = JSON.stringify(res.content);
      replica = s.replica();
    } catch (e) {
      error = String(e && e.message ? e.message : e);
      if (e && e.cause) error += ` (${e.cause.code ?? ""} ${e.cause.message ?? e.cause})`;
    }
    emit({ session: i, call: n, start, end: Date.now(), ok, error, replica, before });
  }
}));
emit("DONE");
await Promise.all(all.map((s) => s.client.close().catch(() => {})));
