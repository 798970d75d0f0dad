// Builds the demo server's MCP App into one self-contained HTML file, vendored as package data
// (langgraph_mcp/examples/apps/files_app.html) so Python users need no npm. Run after changing src/files_app.ts:
//   cd langgraph_mcp/examples/apps_ui && npm install && npm run build
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = await build({
  entryPoints: [join(here, "src", "files_app.ts")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  write: false,
  legalComments: "none",
});
const script = out.outputFiles[0].text.replace(/<\/script/gi, "<\\/script");
const template = readFileSync(join(here, "src", "files_app.html"), "utf8");
// A function, not a string: a replacement string would read "$&" and "$'" in the script as patterns.
const html = template.replace("<!--APP_SCRIPT-->", () => `<script>${script}</script>`);
writeFileSync(join(here, "..", "apps", "files_app.html"), html);
console.log(`files_app.html: ${html.length} bytes`);
