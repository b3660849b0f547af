// The TypeScript SDK client signing in to a team's gateway with the gateway's identity
// provider (the MCP authorization spec, the SDK's own OAuth client), for team_test.go.
// Usage: node signin.mjs URL OPS
// The client discovers the gateway's protected-resource metadata from its 401, registers
// itself with the provider (dynamic registration), and asks for authorization: it prints
// "AUTHORIZE <url>" and waits for the provider to redirect the browser (the test plays it)
// to its loopback listener, then finishes the sign-in, connects, and runs OPS (a JSON array
// of [method, params] pairs, as client.mjs). The results are printed as one JSON line
// {"results": [...]} (an error as {"error": message}).
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, ops] = process.argv.slice(2);

// The loopback listener the provider redirects to.
let gotCode;
const code = new Promise((resolve) => { gotCode = resolve; });
const listener = http.createServer((req, res) => {
  const u = new URL(req.url, "http://127.0.0.1");
  const c = u.searchParams.get("code");
  res.writeHead(c ? 200 : 400, { "Content-Type": "text/plain" });
  res.end(c ? "signed in: you may close this page" : "no code");
  if (c) gotCode(c);
});
await new Promise((resolve) => listener.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${listener.address().port}/callback`;

// The SDK's OAuthClientProvider, keeping everything in memory.
const store = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { client_name: "gateway-interop", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation: () => store.client,
  saveClientInformation: (c) => { store.client = c; },
  tokens: () => store.tokens,
  saveTokens: (t) => { store.tokens = t; },
  redirectToAuthorization: (u) => { process.stdout.write(`AUTHORIZE ${u.href}\n`); },
  saveCodeVerifier: (v) => { store.verifier = v; },
  codeVerifier: () => store.verifier,
};

const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "gateway-interop-signin", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
};

let session;
try {
  session = await connect();
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await transport.finishAuth(await code);
  session = await connect();
}
listener.close();
const out = [];
for (const [method, params] of JSON.parse(ops)) {
  try {
    if (method === "tools/list") out.push(await session.client.listTools(params));
    else if (method === "tools/call") out.push(await session.client.callTool(params));
    else throw new Error(`unknown op ${method}`);
  } catch (e) {
    out.push({ error: String(e && e.message ? e.message : e) });
  }
}
process.stdout.write(JSON.stringify({ results: out }) + "\n");
await session.client.close();
