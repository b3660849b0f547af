// A downstream MCP client for the gateway interop tests: the official TypeScript SDK's
// Client over Streamable HTTP. Usage: node client.mjs URL TOKEN OPS
// OPS is a JSON array of [method, params] pairs, run in order; the results are printed
// as one JSON array on stdout (an error as {"error": message}).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, ops] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "gateway-interop", version: "1.0.0" });
const calls = {
  "tools/list": (p) => client.listTools(p),
  "tools/call": (p) => client.callTool(p),
  "resources/list": (p) => client.listResources(p),
  "resources/templates/list": (p) => client.listResourceTemplates(p),
  "resources/read": (p) => client.readResource(p),
  "prompts/list": (p) => client.listPrompts(p),
  "prompts/get": (p) => client.getPrompt(p),
  "completion/complete": (p) => client.complete(p),
};
await client.connect(transport);
const out = [];
for (const [method, params] of JSON.parse(ops)) {
  try {
    out.push(await calls[method](params));
  } catch (e) {
    out.push({ error: String(e && e.message ? e.message : e) });
  }
}
process.stdout.write(JSON.stringify({ server: client.getServerVersion(), results: out }));
await client.close();
