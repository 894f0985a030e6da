// Drives `scopegate mcp` with the MCP TypeScript SDK's Client over stdio:
// lists and reads the session's resources, then runs a long shell call,
// waits for two progress notifications and cancels it. Prints one JSON
// object describing what happened; the Go test asserts on it.
// Usage: node progress-cancel.mjs SCOPEGATE_BIN SESSION_ID COMMAND
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, session, command] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["mcp", "--session", session], env: process.env, stderr: "inherit" });
const client = new Client({ name: "scopegate-e2e", version: "1.0.0" });
await client.connect(transport);

const out = { resources: [], progress: [], cancelled: false, error: "" };
const { resources } = await client.listResources();
for (const r of resources) {
  const read = await client.readResource({ uri: r.uri });
  out.resources.push({ name: r.name, uri: r.uri, mimeType: r.mimeType, text: read.contents[0].text });
}

const controller = new AbortController();
try {
  await client.callTool({ name: "shell", arguments: { command } }, undefined, {
    signal: controller.signal,
    timeout: 60000,
    onprogress: (p) => {
      out.progress.push(p);
      if (out.progress.length === 2) controller.abort("enough");
    },
  });
} catch (e) {
  out.cancelled = controller.signal.aborted;
  out.error = String(e);
}
// Give the server a moment to record the cancelled call, then close.
await new Promise((r) => setTimeout(r, 500));
await client.close();
console.log(JSON.stringify(out));
