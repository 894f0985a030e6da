// Drives scopegate's MCP server with the MCP TypeScript SDK's Client
// declaring form elicitation, over stdio or Streamable HTTP. It makes the
// calls of a scenario in order; when the server asks (elicitation/create),
// it answers as the step says. Prints one JSON array: per step, the offers
// the client received and the call's result. The Go test asserts on it.
//
// Usage: node elicit.mjs stdio SCOPEGATE_BIN SESSION_ID SCENARIO_JSON
//        node elicit.mjs http URL SCENARIO_JSON
// A step: {"tool", "arguments", "answer": "once" | "session" | "deny" |
// "decline" | "cancel" | "late" (accepts "once" after LATE_MS),
// "during": {"tool", "arguments"} (a call made while the offer is open)}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [kind, ...rest] = process.argv.slice(2);
let transport, scenario;
if (kind === "stdio") {
  const [bin, session, json] = rest;
  transport = new StdioClientTransport({ command: bin, args: ["mcp", "--session", session], env: process.env, stderr: "inherit" });
  scenario = JSON.parse(json);
} else {
  const [url, json] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url));
  scenario = JSON.parse(json);
}
const lateMs = Number(process.env.LATE_MS || 4000);
const client = new Client({ name: "scopegate-e2e-elicit", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });

let step = null;
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const offer = { message: req.params.message, schema: req.params.requestedSchema };
  step.out.offers.push(offer);
  if (step.during) {
    const r = await client.callTool({ name: step.during.tool, arguments: step.during.arguments });
    offer.during = { isError: r.isError === true, text: r.content.map((c) => c.text).join("") };
  }
  switch (step.answer) {
    case "once":
    case "session":
    case "deny":
      return { action: "accept", content: { answer: step.answer } };
    case "decline":
      return { action: "decline" };
    case "cancel":
      return { action: "cancel" };
    case "late":
      await new Promise((r) => setTimeout(r, lateMs));
      return { action: "accept", content: { answer: "once" } };
  }
  return { action: "decline" };
});
await client.connect(transport);

const results = [];
for (const s of scenario) {
  step = { ...s, out: { offers: [] } };
  try {
    const r = await client.callTool({ name: s.tool, arguments: s.arguments }, undefined, { timeout: 120000 });
    step.out.isError = r.isError === true;
    step.out.text = r.content.map((c) => c.text).join("");
    step.out.decision = r.structuredContent?.decision;
  } catch (e) {
    step.out.error = String(e);
  }
  results.push(step.out);
}
await client.close();
console.log(JSON.stringify(results));
