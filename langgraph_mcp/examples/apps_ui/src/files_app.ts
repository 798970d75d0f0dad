// The demo server's MCP App: lists the workspace files the tool returned, refreshes them through the app-only
// tool `files_snapshot`, deletes one through `delete_file` (a destructive call the host's approval gate judges;
// the app shows the answer it gets: the result, or the refusal), asks the host to add a message or open a link
// (shown to the person, who decides), and can probe its own sandbox (for the browser tests). Built with the official app SDK.
import { App } from "@modelcontextprotocol/ext-apps/app-with-deps";

type Files = { files: string[] };

const app = new App({ name: "langgraph-mcp-files", version: "0.1.0" }, {});
const list = document.getElementById("files") as HTMLUListElement;
const status = document.getElementById("status") as HTMLParagraphElement;
const probe = document.getElementById("probe") as HTMLParagraphElement;

function textOf(result: { content?: Array<{ type: string; text?: string }> }): string {
  return (result.content ?? []).map((block) => (block.type === "text" ? block.text ?? "" : `[${block.type}]`)).join("\n");
}

function render(files: string[]): void {
  list.replaceChildren(
    ...files.map((name) => {
      const item = document.createElement("li");
      const label = document.createElement("span");
      label.textContent = name;
      const remove = document.createElement("button");
      remove.textContent = "Delete";
      remove.dataset.file = name;
      remove.onclick = () => void call("delete_file", { path: name });
      item.append(label, remove);
      return item;
    }),
  );
  list.dataset.count = String(files.length);
}

function filesOf(result: { structuredContent?: unknown; content?: Array<{ type: string; text?: string }> }): string[] | null {
  const data = result.structuredContent as Partial<Files> | undefined;
  if (data && Array.isArray(data.files)) return data.files.map(String);
  return null;
}

async function call(name: string, args: Record<string, unknown>): Promise<void> {
  status.textContent = `${name}: sent`;
  try {
    const result = await app.callServerTool({ name, arguments: args });
    status.textContent = `${name}: ${result.isError ? "error: " : ""}${textOf(result)}`;
    const files = filesOf(result);
    if (files) render(files);
  } catch (error) {
    status.textContent = `${name}: failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function attempt(what: string, action: () => unknown): string {
  try {
    const value = action();
    return `${what}: reached (${String(value).slice(0, 40)})`;
  } catch (error) {
    return `${what}: blocked`;
  }
}

app.ontoolresult = (result) => {
  const files = filesOf(result);
  if (files) render(files);
  status.textContent = "ready";
};

(document.getElementById("refresh") as HTMLButtonElement).onclick = () => void call("files_snapshot", {});
(document.getElementById("ask") as HTMLButtonElement).onclick = () =>
  void app
    .sendMessage({ role: "user", content: [{ type: "text", text: "Summarise my files" }] })
    .then((r) => (status.textContent = `message: ${r.isError ? "not sent" : "shown"}`))
    .catch((e) => (status.textContent = `message: refused: ${e instanceof Error ? e.message : String(e)}`));
(document.getElementById("link") as HTMLButtonElement).onclick = () =>
  void app
    .openLink({ url: "https://modelcontextprotocol.io/" })
    .then((r) => (status.textContent = `link: ${r.isError ? "not opened" : "shown"}`))
    .catch((e) => (status.textContent = `link: refused: ${e instanceof Error ? e.message : String(e)}`));
(document.getElementById("escape") as HTMLButtonElement).onclick = () => {
  const lines = [
    attempt("parent DOM", () => window.parent.document.title),
    attempt("top DOM", () => window.top!.document.body.innerHTML.length),
    attempt("cookies", () => {
      const cookie = document.cookie;
      return cookie;
    }),
    attempt("storage", () => window.localStorage.length),
    attempt("top navigation", () => {
      window.top!.location.href = "https://example.com/escaped";
      return "navigated";
    }),
  ];
  probe.textContent = lines.join("\n");
};

void app.connect();
