#!/usr/bin/env node
// fixtures2026.mjs — the tools and the prompt that the 2026-07-28
// scenarios of the conformance suite (0.2.0-alpha.12) call and the
// reference server (v0.1.16) lacks, as a server of the 2025 era: the
// official SDK's v1 server (@modelcontextprotocol/sdk, pinned in
// ../package.json) on stdio. run2026.mjs puts it behind `toolgate serve`
// beside the reference server (toolgate2026.lua).
//
// Written from the scenarios' descriptions, not copied: where a scenario
// wants its server to answer `input_required` (SEP-2322), this one does
// what a server of its era does instead, and asks its client mid-call
// (elicitation/create, sampling/createMessage, roots/list). toolgate's
// relay (src/mcp/parked.c) turns that request into the
// `input_required` result the 2026-07-28 client gets, with toolgate's
// requestState, and the client's retry into the answer this server
// awaits. So the scenarios check toolgate's relay, not this file.
//
// Its requests go with the ids it chooses (JSON-RPC ids are the sender's
// to choose), the keys the scenarios name (`user_name`, `step1`, ...):
// toolgate keys each relayed request in `inputRequests` by its id at the
// upstream. The SDK numbers its own requests, so `askAs` sends them itself.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema,
  ListToolsRequestSchema, McpError, ErrorCode,
} from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "toolgate-conformance-fixtures-2026", version: "1.0.0" },
  { capabilities: { tools: {}, prompts: {}, logging: {} } });

const text = (t) => ({ content: [{ type: "text", text: t }] });
const failed = (t) => ({ ...text(t), isError: true });
const none = { type: "object", properties: {} };
const nameSchema = (key) => ({ type: "object", properties: { [key]: { type: "string" } }, required: [key] });

// A request of the server's with the id `key` (or `key-N` while one of
// that id waits); its answer comes back under that id.
const transport = new StdioServerTransport();
const waiting = new Map();
let serial = 0;
function askAs(key, method, params) {
  const id = waiting.has(key) ? `${key}-${++serial}` : key;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    transport.send({ jsonrpc: "2.0", id, method, params }).catch((e) => {
      waiting.delete(id);
      reject(e);
    });
  });
}
function takeAnswers() {
  const sdk = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    const w = typeof msg?.id === "string" && !("method" in msg) ? waiting.get(msg.id) : undefined;
    if (!w) return sdk?.(msg, extra);
    waiting.delete(msg.id);
    if (msg.error) w.reject(new McpError(msg.error.code, msg.error.message, msg.error.data));
    else w.resolve(msg.result);
  };
}

const ask = {
  name: (message = "What is your name?", key = "user_name") =>
    askAs(key, "elicitation/create", { message, requestedSchema: nameSchema("name") }),
  confirm: () => askAs("confirmation", "elicitation/create", {
    message: "Please confirm",
    requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
  }),
  sample: (question, maxTokens, key = "capital_question") => askAs(key, "sampling/createMessage", {
    messages: [{ role: "user", content: { type: "text", text: question } }], maxTokens,
  }),
  roots: () => askAs("client_roots", "roots/list", {}),
};
const accepted = (r) => r?.action === "accept" && r.content;
const sampled = (r) => (r?.content?.type === "text" ? r.content.text : JSON.stringify(r?.content));

// the 0.2.0 fixture's schema: 2020-12 with $anchor, allOf/anyOf, if/then/else
const SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: { address: { $anchor: "addressDef", type: "object",
    properties: { street: { type: "string" }, city: { type: "string" } } } },
  properties: {
    name: { type: "string" }, address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" }, email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
};

const tools = {
  test_input_required_result_elicitation: {
    description: "Asks the client for a name (elicitation/create), then greets it",
    run: async () => {
      const r = await ask.name();
      return accepted(r) ? text(`Hello, ${r.content.name}!`) : failed(`not answered: ${r?.action}`);
    },
  },
  test_input_required_result_sampling: {
    description: "Asks the client's model a question (sampling/createMessage)",
    run: async () => text(`The model said: ${sampled(await ask.sample("What is the capital of France?", 100))}`),
  },
  test_input_required_result_list_roots: {
    description: "Asks the client for its roots (roots/list)",
    run: async () => {
      const r = await ask.roots();
      return text(`Roots: ${(r.roots || []).map((x) => x.uri).join(", ") || "(none)"}`);
    },
  },
  test_input_required_result_request_state: {
    description: "Asks for a confirmation; the state between the rounds is the gateway's",
    run: async () => {
      const r = await ask.confirm();
      return accepted(r) ? text(`state-ok: confirmed ${r.content.ok}`) : failed(`not confirmed: ${r?.action}`);
    },
  },
  test_input_required_result_tampered_state: {
    description: "Asks for a confirmation (the gateway signs the requestState)",
    run: async () => {
      const r = await ask.confirm();
      return accepted(r) ? text("confirmed") : failed(`not confirmed: ${r?.action}`);
    },
  },
  test_input_required_result_multiple_inputs: {
    description: "Asks for a name, a greeting from the model and the roots at once",
    run: async () => {
      const [who, greeting, roots] = await Promise.allSettled([
        ask.name(), ask.sample("Generate a greeting", 50, "greeting"), ask.roots()]);
      const why = [who, greeting, roots].filter((x) => x.status === "rejected").map((x) => x.reason?.message);
      if (why.length) return failed(`some requests were refused: ${why.join("; ")}`);
      return text(`${sampled(greeting.value)} ${who.value.content?.name}; roots: ${roots.value.roots?.length}`);
    },
  },
  test_input_required_result_multi_round: {
    description: "Asks for a name, then for a favourite colour",
    run: async () => {
      const a = await ask.name("Step 1: What is your name?", "step1");
      if (!accepted(a)) return failed(`step 1 not answered: ${a?.action}`);
      const b = await askAs("step2", "elicitation/create", {
        message: "Step 2: What is your favorite color?", requestedSchema: nameSchema("color") });
      if (!accepted(b)) return failed(`step 2 not answered: ${b?.action}`);
      return text(`${a.content.name} likes ${b.content.color}`);
    },
  },
  test_input_required_result_capabilities: {
    description: "Asks for a name if the client can be asked, else the client's model",
    run: async () => {
      try {
        const r = await ask.name();
        return text(`asked by elicitation: ${r?.action}`);
      } catch {
        const r = await ask.sample("What is your name?", 20, "user_name_sampled");
        return text(`asked by sampling: ${sampled(r)}`);
      }
    },
  },
  test_missing_capability: {
    description: "Needs the client's model (sampling/createMessage) and nothing else will do",
    run: async () => text(`The model said: ${sampled(await ask.sample("Say hello", 10, "hello"))}`),
  },
  test_streaming_elicitation: {
    description: "Asks the client for a name mid-call",
    run: async () => {
      const r = await ask.name();
      return text(`answered: ${r?.action}`);
    },
  },
  test_logging_tool: {
    description: "Logs three messages while it runs",
    run: async () => {
      for (const level of ["info", "warning", "error"])
        await server.sendLoggingMessage({ level, logger: "fixtures2026", data: `a ${level} message` });
      return text("logged three messages");
    },
  },
  test_custom_headers: {
    description: "Parameters mirrored into Mcp-Param-* HTTP headers (x-mcp-header)",
    inputSchema: {
      type: "object",
      properties: {
        region: { type: "string", description: "Plain ASCII string", "x-mcp-header": "Region" },
        priority: { type: "integer", description: "Integer", "x-mcp-header": "Priority" },
        query: { type: "string", description: "No x-mcp-header annotation" },
      },
      required: ["region"],
    },
    run: async (args) => text(`region=${args.region}`),
  },
  json_schema_2020_12_tool: {
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: SCHEMA_2020_12,
    run: async () => text("ok"),
  },
};

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: Object.entries(tools).map(([name, t]) =>
    ({ name, description: t.description, inputSchema: t.inputSchema || none })),
}));

server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const t = tools[req.params.name];
  if (!t) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
  try {
    return await t.run(req.params.arguments || {});
  } catch (e) {
    return failed(`${req.params.name}: ${e?.message || e}`);
  }
});

const PROMPT = "test_input_required_result_prompt";
server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: [{ name: PROMPT, description: "A prompt that asks the client for its context first" }],
}));
server.setRequestHandler(GetPromptRequestSchema, async (req) => {
  if (req.params.name !== PROMPT)
    throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
  const r = await askAs("user_context", "elicitation/create", {
    message: "What context should the prompt use?", requestedSchema: nameSchema("context") });
  const context = accepted(r) ? r.content.context : "(none given)";
  return { messages: [{ role: "user", content: { type: "text", text: `Use this context: ${context}` } }] };
});

await server.connect(transport);
takeAnswers();
