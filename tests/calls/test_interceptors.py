"""Interceptors around MCP tool calls: composed onion-style, short-circuiting, retrying, and around calls that ask
the user (both eras over HTTP), where the interrupt passes through them and a resume runs them again."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp.types as types
import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.calls.interceptors import McpToolCallRequest, ToolCallHandler, ToolCallOutcome
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import ERAS, OpenServers, serve_asgi
from tests.support.node_support import call, one_turn_graph, text_of, tool_messages
from tests.support.servers.identity_server import Record, build_identity_server

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""Not about approvals: the tool node runs every call unasked (since issue 19 it asks about destructive and
unannotated tools by default)."""

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def served() -> AsyncIterator[tuple[str, Record]]:
    srv, record = build_identity_server()
    async with serve_asgi(srv.streamable_http_app()) as base:
        yield f"{base}/mcp", record


def go() -> dict[str, Any]:
    return {"messages": [HumanMessage("go")]}


@pytest.mark.parametrize("mode", ERAS)
async def test_composed_interceptors_change_args_and_headers_first_is_outermost(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    order: list[str] = []

    async def plus_100(request: McpToolCallRequest, handler: ToolCallHandler) -> ToolCallOutcome:
        order.append("plus_100 in")
        result = await handler(request.override(args={**request.args, "a": request.args["a"] + 100}))
        order.append("plus_100 out")
        return result

    async def user_header(request: McpToolCallRequest, handler: ToolCallHandler) -> ToolCallOutcome:
        order.append("user_header in")
        if request.config is None:  # a plain call_tool, outside any run
            result = await handler(request)
        else:
            assert request.runtime is not None  # the run's LangGraph Runtime (context, store, stream writer)
            assert request.tool_call_id == "c1" and request.server == "ident" and request.name == "add"
            user = request.config["configurable"]["user"]
            result = await handler(request.override(headers={**request.headers, "X-User": user}))
        order.append("user_header out")
        return result

    (url, record) = await open_servers.enter(served())
    servers = open_servers({"ident": {"url": url, "mode": mode}}, interceptors=[plus_100, user_header])
    graph = one_turn_graph(servers, [call("ident_add", "c1", a=5, b=1)], checkpointer, policy=NO_APPROVALS)
    out = await graph.ainvoke(go(), {"configurable": {"thread_id": "t", "user": "ada"}})
    assert text_of(tool_messages(out)["c1"]) == "106"
    (seen,) = record.of("add")
    assert (seen["a"], seen["b"], seen["x_user"]) == (105, 1, "ada")
    assert order == ["plus_100 in", "user_header in", "user_header out", "plus_100 out"]
    # The plain call path runs them too.
    result = await servers.call_tool("ident_add", {"a": 1})
    assert result.content[0].text == "101"  # type: ignore[union-attr]


async def test_an_interceptor_can_short_circuit_with_a_toolmessage_or_a_result(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    async def deny_flaky(request: McpToolCallRequest, handler: ToolCallHandler) -> ToolCallOutcome:
        if request.name == "flaky":
            return ToolMessage("flaky is disabled here", tool_call_id=request.tool_call_id, status="error")
        if request.published_name == "ident_add":
            return types.CallToolResult(content=[types.TextContent(text="cached: 42")])
        return await handler(request)

    (url, record) = await open_servers.enter(served())
    servers = open_servers({"ident": {"url": url}}, interceptors=[deny_flaky])
    calls = [
        call("ident_flaky", "f", marker="m"),
        call("ident_add", "a", a=1),
        call("ident_whoami", "w", run="r"),
    ]
    out = await one_turn_graph(servers, calls, checkpointer, policy=NO_APPROVALS).ainvoke(
        go(), {"configurable": {"thread_id": "t"}}
    )
    messages = tool_messages(out)
    assert messages["f"].status == "error" and text_of(messages["f"]) == "flaky is disabled here"
    assert messages["f"].name == "ident_flaky"
    assert text_of(messages["a"]) == "cached: 42"
    assert messages["w"].status == "success"
    assert [c["tool"] for c in record.calls] == ["whoami"]  # the server never saw the other two


@pytest.mark.parametrize("mode", ERAS)
async def test_an_interceptor_can_retry_a_failing_call(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    async def retry(request: McpToolCallRequest, handler: ToolCallHandler) -> ToolCallOutcome:
        for _ in range(3):
            try:
                result = await handler(request)
            except Exception:
                continue
            if not (isinstance(result, types.CallToolResult) and result.is_error):
                return result
        return result

    (url, record) = await open_servers.enter(served())
    servers = open_servers({"ident": {"url": url, "mode": mode}}, interceptors=[retry])
    graph = one_turn_graph(
        servers, [call("ident_flaky", "c1", marker="m", failures=2)], checkpointer, policy=NO_APPROVALS
    )
    out = await graph.ainvoke(go(), {"configurable": {"thread_id": "t"}})
    message = tool_messages(out)["c1"]
    assert message.status == "success" and text_of(message) == "ok m"
    assert len(record.of("flaky")) == 3


@pytest.mark.parametrize("path", ["fast", "durable"])
@pytest.mark.parametrize("mode", ERAS)
async def test_interceptors_around_a_call_that_asks_the_user(
    open_servers: OpenServers, mode: str, path: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    seen_args: list[dict[str, Any]] = []

    async def plus_100(request: McpToolCallRequest, handler: ToolCallHandler) -> ToolCallOutcome:
        seen_args.append(dict(request.args))
        return await handler(request.override(args={**request.args, "amount": request.args["amount"] + 100}))

    async def catch_all(request: McpToolCallRequest, handler: ToolCallHandler) -> ToolCallOutcome:
        # A careless interceptor that swallows every exception must not swallow the question.
        try:
            return await handler(request)
        except Exception as exc:
            return ToolMessage(f"swallowed {exc!r}", tool_call_id=request.tool_call_id, status="error")

    config = {"configurable": {"thread_id": f"t-{mode}-{path}"}}
    calls = [call("ident_transfer", "c1", amount=5)]
    url, record = await open_servers.enter(served())
    spec = {"ident": {"url": url, "mode": mode}}
    servers = open_servers(spec, interceptors=[plus_100, catch_all])
    out = await one_turn_graph(servers, calls, checkpointer, policy=NO_APPROVALS).ainvoke(go(), config)
    (pending,) = out["__interrupt__"]
    assert pending.value["arguments"] == {"amount": 105}  # the question is about the call really sent
    if path == "durable":  # a new process: nothing of the paused call is left in memory
        await servers.aclose()
        servers = open_servers(spec, interceptors=[plus_100, catch_all])
    (key,) = pending.value["requests"]
    answer = {key: {"action": "accept", "content": {"ok": True}}}
    out = await one_turn_graph(servers, calls, checkpointer, policy=NO_APPROVALS).ainvoke(
        Command(resume={pending.id: answer}), config
    )
    message = tool_messages(out)["c1"]
    assert message.status == "success" and text_of(message) == "transferred 105"
    assert [c["amount"] for c in record.of("transfer")] == [105]
    assert seen_args == [{"amount": 5}, {"amount": 5}]  # they ran again on the resume


class ForecastModel(BaseChatModel):
    """Asks for a two-day forecast (it can't name a city: the schema it sees has none), then says "done"."""

    @property
    def _llm_type(self) -> str:
        return "forecast"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ForecastModel:  # type: ignore[override]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            call = {"name": "demo_get_forecast", "args": {"days": 2}, "id": "fc", "type": "tool_call"}
            return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))])
        return ChatResult(generations=[ChatGeneration(message=AIMessage("done"))])


async def test_a_hidden_argument_is_filled_from_the_run_config_inside_create_agent(
    open_servers: OpenServers,
) -> None:
    async def home_city(request: McpToolCallRequest, handler: ToolCallHandler) -> ToolCallOutcome:
        if request.published_name == "demo_get_forecast" and request.config is not None:
            request = request.override(
                args={**request.args, "city": request.config["configurable"]["home_city"]}
            )
        return await handler(request)

    servers = open_servers(
        {"demo": {"transport": "in_process", "server": build_server()}}, interceptors=[home_city]
    )
    tools = {tool.name: tool for tool in await servers.get_tools()}
    forecast = tools["demo_get_forecast"]
    schema = copy.deepcopy(forecast.args_schema)
    assert isinstance(schema, dict)
    schema["properties"].pop("city")
    schema["required"] = [name for name in schema.get("required", []) if name != "city"]
    forecast.args_schema = schema
    agent = create_agent(ForecastModel(), list(tools.values()))
    out = await agent.ainvoke(
        {"messages": [HumanMessage("weather?")]}, {"configurable": {"home_city": "Oslo"}}
    )
    (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert message.status == "success"
    assert message.artifact[0]["data"]["city"] == "Oslo"
    seen = convert_to_openai_tool(forecast)["function"]["parameters"]["properties"]  # what a provider is sent
    assert set(seen) == {"days"}
