// An MCP Apps server on another implementation: the TypeScript MCP SDK (v2) with @modelcontextprotocol/ext-apps'
// server helpers. Tools: `show_counter` (ui://counter/app.html, model and app), `counter_bump` (app only).
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { z } from "zod";

const URI = "ui://counter/app.html";
const HTML = "<!doctype html><html><body><p id=count>0</p></body></html>";
let count = 0;
const server = new McpServer({ name: "counter", version: "1.0.0" });

registerAppTool(
  server,
  "show_counter",
  { description: "Show the counter", inputSchema: z.object({}), annotations: { readOnlyHint: true }, _meta: { ui: { resourceUri: URI } } },
  async () => ({ content: [{ type: "text", text: `count is ${count}` }], structuredContent: { count } }),
);
registerAppTool(
  server,
  "counter_bump",
  { description: "Bump the counter", inputSchema: z.object({}), _meta: { ui: { resourceUri: URI, visibility: ["app"] } } },
  async () => {
    count += 1;
    return { content: [{ type: "text", text: `count is ${count}` }], structuredContent: { count } };
  },
);
registerAppResource(server, "counter", URI, { description: "The counter view", _meta: { ui: { csp: { connectDomains: ["https://counter.example"] }, prefersBorder: false } } }, async () => ({
  contents: [{ uri: URI, mimeType: RESOURCE_MIME_TYPE, text: HTML, _meta: { ui: { csp: { connectDomains: ["https://counter.example"] }, prefersBorder: false } } }],
}));

await server.connect(new StdioServerTransport());
