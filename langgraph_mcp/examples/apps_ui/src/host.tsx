// The MCP Apps host component for Agent Chat UI (and any LangGraph UI that renders generative UI messages with
// LoadExternalComponent): it renders the `mcp_app` UI message that langgraph_mcp pushes for a call to a tool with a
// `ui://` resource. `langgraph dev` bundles this file through the `ui` key of langgraph.apps.json.
//
// * The app runs in a sandboxed iframe behind the sandbox proxy (SEP-1865), served from the LangGraph API's origin
//   (/mcp-apps/sandbox), never the page's: the component refuses to show the app when the proxy would share the
//   page's origin. The proxy applies the resource's declared CSP and nothing more.
// * The MCP Apps host protocol is the official `@modelcontextprotocol/ext-apps` host side (AppBridge).
// * The app gets the tool's input and result. Its `tools/call` goes to the thread as a new run whose input is an
//   AIMessage holding the call, marked `mcp_app` (which server's app, which resource): the graph judges it exactly
//   as a model's call (the mark is shown, never trusted). While the thread waits for a person or a run is
//   streaming, the call is refused with words (a person's pending answer is never replaced).
// * `ui/message` and `ui/open-link` are shown to the person, who decides; nothing is done silently.
// * Refused: resources, prompts, sampling, model-context updates, downloads, display modes other than inline.
import React, { useEffect, useMemo, useRef, useState } from "react";
import { useStreamContext } from "@langchain/langgraph-sdk/react-ui";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

type Block = { type: string; text?: string; [key: string]: unknown };
type CallToolResult = { content: Block[]; structuredContent?: unknown; isError?: boolean };

export type McpAppProps = {
  type: "mcp_app";
  server: string;
  tool: string;
  published_name: string;
  tool_call_id: string;
  resource_uri: string;
  mime_type: string;
  html: string;
  ui: {
    csp?: Record<string, string[]>;
    permissions?: Record<string, object>;
    domain?: string;
    prefersBorder?: boolean;
  };
  tool_input: Record<string, unknown>;
  tool_result: CallToolResult;
  app_tools: Record<string, string>;
};

type Ask =
  | { kind: "message"; text: string; resolve: (ok: boolean) => void }
  | { kind: "link"; url: string; host: string; resolve: (ok: boolean) => void };

type Pending = { resolve: (result: CallToolResult) => void };

const SANDBOX_PATH = "/mcp-apps/sandbox";
const MIME_TYPE = "text/html;profile=mcp-app";
const PERMISSIONS: Record<string, string> = {
  camera: "camera",
  microphone: "microphone",
  geolocation: "geolocation",
  clipboardWrite: "clipboard-write",
};

function refusal(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function sandboxUrl(stream: any): URL | null {
  const configured = (globalThis as any).LANGGRAPH_MCP_APPS_SANDBOX_URL;
  const api: string | undefined = stream?.client?.["~ui"]?.apiUrl ?? stream?.client?.assistants?.apiUrl;
  const address = typeof configured === "string" ? configured : api ? api.replace(/\/$/, "") + SANDBOX_PATH : null;
  if (!address) return null;
  const url = new URL(address, window.location.href);
  if (url.origin === window.location.origin) return null; // SEP-1865: never the host page's origin
  return url;
}

function allowOf(permissions: Record<string, object> | undefined): string {
  return Object.keys(PERMISSIONS)
    .filter((key) => permissions && typeof permissions[key] === "object")
    .map((key) => PERMISSIONS[key])
    .join("; ");
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((block: any) => (typeof block === "string" ? block : block?.type === "text" ? block.text : "")).join("\n");
  }
  return "";
}

// A ToolMessage of the thread as the CallToolResult the app expects: what the model read, the structured content
// from the artifact, and the status.
function resultOf(message: any): CallToolResult {
  const artifact: any[] = Array.isArray(message.artifact) ? message.artifact : [];
  const structured = artifact.find((entry) => entry?.type === "mcp_structured_content");
  const result: CallToolResult = { content: [{ type: "text", text: textOf(message.content) }] };
  if (structured) result.structuredContent = structured.data;
  if (message.status === "error") result.isError = true;
  return result;
}

function newId(): string {
  const random = (globalThis.crypto as any)?.randomUUID?.() ?? `${Date.now()}-${Math.random()}`;
  return `mcp_app_call_${String(random).replace(/[^A-Za-z0-9_-]/g, "")}`;
}

function McpApp(props: McpAppProps) {
  const stream: any = useStreamContext();
  const frame = useRef<HTMLIFrameElement | null>(null);
  const pending = useRef(new Map<string, Pending>());
  const live = useRef(stream);
  live.current = stream;
  const [height, setHeight] = useState(320);
  const [asks, setAsks] = useState<Ask[]>([]);
  const [note, setNote] = useState<string | null>(null);
  const proxy = useMemo(() => sandboxUrl(stream), []);

  // Answer the app's calls once their ToolMessage is in the thread (at once, after the person approves, or refused).
  const messages: any[] = stream?.values?.messages ?? [];
  useEffect(() => {
    for (const message of messages) {
      if (message?.type !== "tool") continue;
      const waiting = pending.current.get(message.tool_call_id);
      if (waiting) {
        pending.current.delete(message.tool_call_id);
        waiting.resolve(resultOf(message));
      }
    }
  }, [messages]);

  useEffect(() => {
    const iframe = frame.current;
    if (!iframe || !proxy || props.mime_type !== MIME_TYPE || !iframe.contentWindow) return;
    const bridge = new AppBridge(
      null,
      { name: "langgraph-mcp", version: "0.1.0" },
      { openLinks: {}, serverTools: {}, message: { text: {} }, logging: {} },
      { hostContext: { displayMode: "inline", availableDisplayModes: ["inline"] } as any },
    );
    bridge.onsandboxready = () => {
      void bridge.sendSandboxResourceReady({ html: props.html, csp: props.ui?.csp, permissions: props.ui?.permissions } as any);
    };
    bridge.oninitialized = () => {
      void bridge.sendToolInput({ arguments: props.tool_input ?? {} });
      void bridge.sendToolResult(props.tool_result as any);
    };
    bridge.onsizechange = (params: any) => {
      if (typeof params?.height === "number") setHeight(Math.max(80, Math.min(2000, Math.ceil(params.height))));
    };
    bridge.oncalltool = async (params: any) => {
      const name = String(params?.name ?? "");
      const published = Object.prototype.hasOwnProperty.call(props.app_tools ?? {}, name) ? props.app_tools[name] : null;
      if (!published) return refusal(`${name} is not a tool this app may call.`) as any;
      const now = live.current;
      if (now?.interrupt) return refusal("The conversation is waiting for a person's answer; try again after it.") as any;
      if (now?.isLoading) return refusal("The conversation is busy; try again when it is done.") as any;
      const id = newId();
      const done = new Promise<CallToolResult>((resolve) => pending.current.set(id, { resolve }));
      setNote(`The app asked to call ${name}.`);
      const call = {
        type: "ai",
        id: `${id}_message`,
        content: `The app ${props.resource_uri} of ${props.server} asks to call ${name}.`,
        tool_calls: [{ id, name: published, args: params?.arguments ?? {}, type: "tool_call" }],
        additional_kwargs: { mcp_app: { server: props.server, resource_uri: props.resource_uri, tool_call_id: props.tool_call_id } },
      };
      try {
        now.submit({ messages: [call] }, { multitaskStrategy: "reject" });
      } catch (error) {
        pending.current.delete(id);
        return refusal(`The call could not be sent: ${error instanceof Error ? error.message : String(error)}`) as any;
      }
      return (await done) as any;
    };
    bridge.onmessage = async (params: any) => {
      const text = (params?.content ?? []).map((block: any) => (block?.type === "text" ? block.text : "")).join("\n").trim();
      if (!text) return { isError: true };
      const ok = await new Promise<boolean>((resolve) => setAsks((all) => [...all, { kind: "message", text, resolve }]));
      if (ok) live.current.submit({ messages: [{ type: "human", content: text }] }, { multitaskStrategy: "reject" });
      return ok ? {} : { isError: true };
    };
    bridge.onopenlink = async (params: any) => {
      let url: URL;
      try {
        url = new URL(String(params?.url ?? ""));
      } catch {
        return { isError: true };
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") return { isError: true };
      const ok = await new Promise<boolean>((resolve) =>
        setAsks((all) => [...all, { kind: "link", url: url.href, host: url.host, resolve }]),
      );
      if (ok) window.open(url.href, "_blank", "noopener,noreferrer");
      return ok ? {} : { isError: true };
    };
    bridge.onrequestdisplaymode = async () => ({ mode: "inline" }) as any;
    bridge.onupdatemodelcontext = async () => {
      throw new Error("this host does not let an app write to the model's context");
    };
    const transport = new PostMessageTransport(iframe.contentWindow, iframe.contentWindow);
    void bridge.connect(transport);
    return () => {
      for (const waiting of pending.current.values()) waiting.resolve(refusal("The app was closed."));
      pending.current.clear();
      void bridge.close();
    };
  }, [proxy]);

  const answer = (ask: Ask, ok: boolean) => {
    ask.resolve(ok);
    setAsks((all) => all.filter((other) => other !== ask));
  };

  if (!proxy) {
    return (
      <div data-mcp-app-refused={props.resource_uri} style={{ padding: 8, color: "#a00" }}>
        The app {props.resource_uri} of {props.server} is not shown: its sandbox would share this page's origin. Serve
        the sandbox proxy from another origin (LANGGRAPH_MCP_APPS_SANDBOX_URL).
      </div>
    );
  }
  return (
    <div data-mcp-app={props.resource_uri} style={{ margin: "8px 0" }}>
      <div style={{ fontSize: 12, color: "#666" }}>
        App {props.resource_uri} from {props.server} (tool {props.tool})
      </div>
      <iframe
        ref={frame}
        title={`MCP App ${props.resource_uri}`}
        src={proxy.href}
        sandbox="allow-scripts allow-forms"
        allow={allowOf(props.ui?.permissions)}
        referrerPolicy="no-referrer"
        style={{
          width: "100%",
          height,
          border: props.ui?.prefersBorder === false ? "0" : "1px solid #ddd",
          borderRadius: 6,
        }}
      />
      {note ? <div style={{ fontSize: 12, color: "#666" }}>{note}</div> : null}
      {asks.map((ask, index) => (
        <div key={index} data-mcp-app-ask={ask.kind} style={{ border: "1px solid #e3c", padding: 8, margin: "4px 0" }}>
          {ask.kind === "message" ? (
            <span>The app asks to send this message as you: “{ask.text}”</span>
          ) : (
            <span>
              The app asks to open a link on <b>{ask.host}</b>: {ask.url}
            </span>
          )}{" "}
          <button onClick={() => answer(ask, true)}>{ask.kind === "message" ? "Send" : "Open"}</button>{" "}
          <button onClick={() => answer(ask, false)}>Dismiss</button>
        </div>
      ))}
    </div>
  );
}

export default { mcp_app: McpApp };
