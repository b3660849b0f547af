// A downstream MCP client for the gateway interop tests: the official TypeScript SDK's
// Client over Streamable HTTP. Usage: node client.mjs URL TOKEN OPS [ANSWERS]
// OPS is a JSON array of [method, params] pairs, run in order; the results are printed
// as one JSON array on stdout (an error as {"error": message}); the op "wait/tools-changed"
// waits for a notifications/tools/list_changed. The ops "tasks/call" and "tasks/call-cancel"
// call a tool as a task (client.experimental.tasks.callToolStream, which asks for a task
// when the server's capabilities and the listed tool's execution say it may: list the tools
// first); the first reads the result, the second cancels the task once its status has a message (its work began).
// "tasks/call-forced" asks for a task whatever the listing says (the call a client must not make).
// ANSWERS, a JSON object, gives the client the capabilities to answer server requests:
// "elicit" is the elicitation result it answers with (content: the values of the fields the
// form has), "sample" the sampling result; the
// requests it got are printed as "requests" ([method, params] pairs).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token, ops, answersArg] = process.argv.slice(2);
const answers = answersArg ? JSON.parse(answersArg) : {};
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const capabilities = {};
if (answers.elicit) capabilities.elicitation = { form: {} };
if (answers.sample) capabilities.sampling = {};
const client = new Client({ name: "gateway-interop", version: "1.0.0" }, { capabilities });
const requests = [];
if (answers.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    requests.push([req.method, req.params]);
    // Fill in the fields the form has, as a user would.
    const fields = req.params.requestedSchema?.properties ?? {};
    const content = Object.fromEntries(Object.entries(answers.elicit.content ?? {}).filter(([k]) => k in fields));
    return { ...answers.elicit, content };
  });
}
if (answers.sample) {
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    requests.push([req.method, req.params]);
    return answers.sample;
  });
}
// tools/list_changed notifications count; the op "wait/tools-changed" waits (at most 10 s)
// until one has come.
let toolsChanged = 0;
let onToolsChanged = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  toolsChanged++;
  onToolsChanged();
});
const calls = {
  "wait/tools-changed": () =>
    toolsChanged > 0
      ? Promise.resolve({ toolsChanged })
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("no tools/list_changed within 10 s")), 10000);
          onToolsChanged = () => { clearTimeout(timer); resolve({ toolsChanged }); };
        }),
  "tools/list": (p) => client.listTools(p),
  "tasks/call": (p) => taskCall(p, false),
  "tasks/call-cancel": (p) => taskCall(p, true),
  "tasks/call-forced": (p) => taskCall(p, false, { task: {} }),
  "tasks/list": () => client.experimental.tasks.listTasks(),
  "tools/call": (p) => client.callTool(p),
  "resources/list": (p) => client.listResources(p),
  "resources/templates/list": (p) => client.listResourceTemplates(p),
  "resources/read": (p) => client.readResource(p),
  "prompts/list": (p) => client.listPrompts(p),
  "prompts/get": (p) => client.getPrompt(p),
  "completion/complete": (p) => client.complete(p),
};
// taskCall calls a tool as a task and reports what the stream said: the task created, the
// statuses polled, and the result or the error. With cancel, the task is cancelled once
// created, and its state then (tasks/get) is reported.
async function taskCall(params, cancel, options) {
  const out = { statuses: [] };
  for await (const m of client.experimental.tasks.callToolStream(params, undefined, options)) {
    switch (m.type) {
      case "taskCreated":
        out.created = m.task;
        break;
      case "taskStatus":
        out.statuses.push([m.task.status, m.task.statusMessage ?? ""]);
        // Cancelled once it says what it does: the work has begun.
        if (cancel && m.task.statusMessage) {
          out.cancelled = await client.experimental.tasks.cancelTask(m.task.taskId);
          out.after = await client.experimental.tasks.getTask(m.task.taskId);
          return out;
        }
        break;
      case "result":
        out.result = m.result;
        break;
      case "error":
        out.error = String(m.error && m.error.message ? m.error.message : m.error);
        break;
    }
  }
  return out;
}
await client.connect(transport);
const out = [];
for (const [method, params] of JSON.parse(ops)) {
  try {
    out.push(await calls[method](params));
  } catch (e) {
    out.push({ error: String(e && e.message ? e.message : e) });
  }
}
process.stdout.write(JSON.stringify({ server: client.getServerVersion(), results: out, requests }));
await client.close();
