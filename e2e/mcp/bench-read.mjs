// Per-call latency of read_file over stdio, through the same MCP SDK client
// in the same run: scopegate's MCP server against the reference
// @modelcontextprotocol/server-filesystem, reading the same file, calls
// alternated. Prints p50 and p99 of each in milliseconds as JSON.
// Usage: node bench-read.mjs SCOPEGATE_BIN SESSION_ID FILE [N]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [bin, session, file, n = "300"] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const fsServer = join(here, "..", "node_modules", ".bin", "mcp-server-filesystem");

async function connect(command, args) {
  const c = new Client({ name: "scopegate-bench", version: "1.0.0" });
  await c.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" }));
  return c;
}
const scopegate = await connect(bin, ["mcp", "--session", session]);
const reference = await connect(fsServer, [dirname(file)]);
const refTools = (await reference.listTools()).tools.map((t) => t.name);
const refTool = refTools.includes("read_text_file") ? "read_text_file" : "read_file";

const times = { scopegate: [], reference: [] };
async function once(name, client, tool) {
  const t0 = performance.now();
  const r = await client.callTool({ name: tool, arguments: { path: file } });
  times[name].push(performance.now() - t0);
  if (r.isError) throw new Error(name + ": " + JSON.stringify(r.content));
}
for (let i = 0; i < 20; i++) { // warm up both
  await once("scopegate", scopegate, "read_file");
  await once("reference", reference, refTool);
}
times.scopegate = []; times.reference = [];
for (let i = 0; i < Number(n); i++) {
  if (i % 2) { await once("scopegate", scopegate, "read_file"); await once("reference", reference, refTool); }
  else { await once("reference", reference, refTool); await once("scopegate", scopegate, "read_file"); }
}
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const res = {};
for (const k of Object.keys(times)) res[k] = { n: times[k].length, p50_ms: +pct(times[k], 0.5).toFixed(3), p99_ms: +pct(times[k], 0.99).toFixed(3) };
res.reference_tool = refTool;
console.log(JSON.stringify(res));
await scopegate.close(); await reference.close();
