"""What binds a decision to a server (issue 35, item 8): everything that can select the backend — a stdio server's
command line, working directory and ``env``; an HTTP or SSE server's URL and every static header — as a keyed hash.

A remembered approval for one backend never answers a call to another that has the same server name (the other
backend's own record shows nothing ran), the values are never in clear in a payload, the checkpoint, the store or
the package's logs, and a changed value or a new approval key asks again."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, Oversight
from langgraph_mcp.approval.oversight import signer_for
from langgraph_mcp.config import HttpServer, McpServersConfig, SseServer, StdioServer
from langgraph_mcp.errors import ConfigError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.policy.binding import ApprovalKey, server_identity
from langgraph_mcp.transports.base import TRANSPORTS, ServerOptions
from tests.support.helpers import OpenServers, event_pids, serve_asgi, stdio_demo_spec
from tests.support.memory_support import Graph, cfg, decide, turn, wired
from tests.support.servers.identity_server import build_identity_server

pytestmark = pytest.mark.anyio

KEY = "a shared approval key for the tests"
STAGING_SECRET = "staging-db-password-5d1f"
PROD_SECRET = "prod-db-password-91ac"


def _everything_kept(graph_state: Any, store: InMemoryStore, payloads: list[Any]) -> str:
    """What the package kept or showed for a run: the interrupt payloads, the checkpointed state, the store."""
    items = [item.dict() for item in store.search((), limit=10_000)]
    return json.dumps([payloads, items], default=repr) + repr(graph_state)


@pytest.fixture
def package_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG, logger="langgraph_mcp"):
        yield caplog


CASES = [("gate-router", "modern"), ("middleware", "modern"), ("gate-router", "legacy")]
"""(wiring, era): both eras, and the gate and create_agent's middleware."""


def _stdio(open_servers: OpenServers, events: Path, secret: str, era: str) -> McpServers:
    spec = stdio_demo_spec(events_file=events, mode=era)
    spec["env"] = {**spec["env"], "DB_PASSWORD": secret}
    return open_servers({"servers": {"demo": spec}, "approval_key": KEY})


def _deletes(events: Path) -> int:
    return len(event_pids(events, "delete_file")) if events.exists() else 0


@pytest.mark.parametrize(("wiring", "era"), CASES)
async def test_principal_memory_for_a_stdio_env_does_not_answer_another_env(
    open_servers: OpenServers, tmp_path: Path, wiring: str, era: str, package_logs: pytest.LogCaptureFixture
) -> None:
    store = InMemoryStore()
    staging, prod = tmp_path / "staging.jsonl", tmp_path / "prod.jsonl"
    graph: Graph = await wired(_stdio(open_servers, staging, STAGING_SECRET, era), wiring, store=store)
    out = await turn(graph, cfg("t1", "ann"))
    payloads = [out["__interrupt__"][0].value]
    await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "principal"})
    assert _deletes(staging) == 1

    # the same config again (another McpServers, the same key): remembered, not asked
    again = await wired(_stdio(open_servers, staging, STAGING_SECRET, era), wiring, store=store)
    out = await turn(again, cfg("t2", "ann"))
    assert "__interrupt__" not in out and _deletes(staging) == 2

    # the same server name with env pointing at prod: asked, and prod ran nothing
    other = await wired(_stdio(open_servers, prod, PROD_SECRET, era), wiring, store=store)
    out = await turn(other, cfg("t3", "ann"))
    assert "__interrupt__" in out
    payloads.append(out["__interrupt__"][0].value)
    assert _deletes(prod) == 0 and _deletes(staging) == 2

    kept = _everything_kept(await other.aget_state(cfg("t3", "ann")), store, payloads)
    kept += repr(await graph.aget_state(cfg("t1", "ann")))
    for value in (STAGING_SECRET, PROD_SECRET, str(staging), str(prod)):
        assert value not in kept
        assert value not in package_logs.text


@pytest.mark.parametrize(("wiring", "era"), CASES)
async def test_principal_memory_for_one_tenant_header_does_not_answer_another(
    open_servers: OpenServers, wiring: str, era: str, package_logs: pytest.LogCaptureFixture
) -> None:
    srv, record = build_identity_server()
    store = InMemoryStore()
    calls = [("add", {"a": 1, "b": 2})]
    pol = ApprovalPolicy()
    base = await open_servers.enter(serve_asgi(srv.streamable_http_app()))  # stopped after the clients close

    def tenant(key: str) -> McpServers:
        entry = {"url": f"{base}/mcp", "mode": era, "headers": {"X-Key": key}}
        return open_servers({"servers": {"ident": entry}, "approval_key": KEY})

    graph = await wired(tenant("tenant-a-key"), wiring, calls, store=store, pol=pol, prefix="ident_")
    out = await turn(graph, cfg("t1", "ann"))
    payloads = [out["__interrupt__"][0].value]
    assert "principal" in payloads[0]["remember"]
    await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "principal"})
    assert [c["x_key"] for c in record.of("add")] == ["tenant-a-key"]

    same = await wired(tenant("tenant-a-key"), wiring, calls, store=store, pol=pol, prefix="ident_")
    out = await turn(same, cfg("t2", "ann"))
    assert "__interrupt__" not in out
    assert [c["x_key"] for c in record.of("add")] == ["tenant-a-key"] * 2

    other = await wired(tenant("tenant-b-key"), wiring, calls, store=store, pol=pol, prefix="ident_")
    out = await turn(other, cfg("t3", "ann"))
    assert "__interrupt__" in out
    payloads.append(out["__interrupt__"][0].value)
    assert [c["x_key"] for c in record.of("add")] == ["tenant-a-key"] * 2  # tenant b: nothing ran

    kept = _everything_kept(await other.aget_state(cfg("t3", "ann")), store, payloads)
    kept += repr(await graph.aget_state(cfg("t1", "ann")))
    for value in ("tenant-a-key", "tenant-b-key"):
        assert value not in kept
        assert value not in package_logs.text


# ------------------------------------------------------------------------------------------- the identity itself


def _identity(entry: dict[str, Any], key: str = KEY) -> str:
    spec = McpServersConfig.load({"s": entry}).servers["s"]
    return server_identity("s", spec, ApprovalKey(key))


STDIO = {"command": "python", "args": ["-m", "srv"], "cwd": "/srv", "env": {"DB": "staging"}}
HTTP = {"url": "https://h/mcp", "headers": {"X-Key": "a"}}
SSE = {"url": "https://h/sse", "headers": {"X-Key": "a"}}


@pytest.mark.parametrize(
    ("entry", "changed"),
    [
        (STDIO, {"env": {"DB": "prod"}}),
        (STDIO, {"env": None}),
        (STDIO, {"command": "python3"}),
        (STDIO, {"args": ["-m", "other"]}),
        (STDIO, {"cwd": "/other"}),
        (HTTP, {"headers": {"X-Key": "b"}}),
        (HTTP, {"headers": {"X-Key": "a", "X-Tenant": "eu"}}),
        (HTTP, {"url": "https://other/mcp"}),
        (SSE, {"headers": {"X-Key": "b"}}),
        (SSE, {"url": "https://other/sse"}),
    ],
)
def test_anything_that_selects_the_backend_changes_the_identity(
    entry: dict[str, Any], changed: dict[str, Any]
) -> None:
    assert _identity({**entry, **changed}) != _identity(entry)
    assert _identity(entry) == _identity(dict(entry))


@pytest.mark.parametrize(
    ("entry", "changed"),
    [
        (STDIO, {"stderr": "/tmp/x.log", "tool_timeout": 5, "mode": "legacy"}),
        (HTTP, {"timeout": 3, "read_timeout": 9, "max_connections": 4, "listing_max_age": 5}),
        (SSE, {"timeout": 3, "sse_read_timeout": 9}),
    ],
)
def test_options_that_do_not_select_the_backend_keep_the_identity(
    entry: dict[str, Any], changed: dict[str, Any]
) -> None:
    assert _identity({**entry, **changed}) == _identity(entry)


def test_the_identity_is_keyed_and_shows_no_value() -> None:
    """A new approval key is another identity (so it asks again); no value of the config is in it."""
    identity = _identity(STDIO)
    assert identity.startswith("s#") and _identity(STDIO, "another key") != identity
    assert "staging" not in identity and "python" not in identity and "/srv" not in identity


NOT_BACKEND: dict[str, set[str]] = {
    "stdio": {"stderr"},  # where the child's stderr goes
    "streamable_http": {"auth", "credentials", "oauth", "timeout", "read_timeout", "max_connections"}
    | {"listing_max_age"},  # per-run sign-in (who, not where) and timings
    "sse": {"credentials", "timeout", "sse_read_timeout"},
    "in_process": set(),
}
"""Each built-in transport's own fields that do not select the backend, and why; every other field must be bound."""


def _instance(tag: str) -> Any:
    entries = {"stdio": STDIO, "streamable_http": HTTP, "sse": SSE, "in_process": {"server": build_server()}}
    return McpServersConfig.load({"s": {**entries[tag], "transport": tag}}).servers["s"]


@pytest.mark.parametrize("tag", ["stdio", "streamable_http", "sse", "in_process"])
def test_every_field_of_a_built_in_transport_is_bound_or_said_not_to_select_the_backend(tag: str) -> None:
    """A field added to a transport later is caught here until its binding() or this table says what it is."""
    own = set(TRANSPORTS[tag].model_fields) - set(ServerOptions.model_fields) - {"transport"}
    bound = set(_instance(tag).binding())
    assert own - NOT_BACKEND[tag] <= bound
    assert not (bound & NOT_BACKEND[tag])


async def test_the_signers_server_identity_uses_the_configured_key(open_servers: OpenServers) -> None:
    spec = {"command": "python", "env": {"DB": "staging"}}
    servers = open_servers({"servers": {"s": spec}, "approval_key": KEY})
    assert signer_for(servers).server_identity("s") == _identity(spec)
    assert isinstance(McpServersConfig.load({"s": spec}).servers["s"], StdioServer)
    assert {HttpServer, SseServer} <= set(TRANSPORTS.values())


async def test_an_oversight_key_replaces_the_default_key_and_the_identities_made_with_it(
    open_servers: OpenServers,
) -> None:
    spec = {"command": "python", "env": {"DB": "staging"}}
    servers = open_servers({"servers": {"s": spec}})
    signer = signer_for(servers)
    signer.server_identity("s")  # made (and kept) with the default key
    McpToolNode(servers, oversight=Oversight(approval_key="the deployment's key"))
    assert signer_for(servers) is signer  # one signer for every path over these servers
    assert signer.key.key_id == ApprovalKey("the deployment's key").key_id
    assert signer.server_identity("s") == _identity(spec, "the deployment's key")


async def test_an_oversight_key_that_differs_from_the_configs_is_a_configuration_error(
    open_servers: OpenServers,
) -> None:
    servers = open_servers({"servers": {"s": {"command": "python"}}, "approval_key": KEY})
    with pytest.raises(ConfigError, match="give one of them"):
        McpToolNode(servers, oversight=Oversight(approval_key="another key"))
    McpToolNode(servers, oversight=Oversight(approval_key=KEY))  # the same key: nothing to choose
    assert signer_for(servers).key.key_id == ApprovalKey(KEY).key_id
    with pytest.raises(ConfigError, match="no MCP server named 'nope'"):
        signer_for(servers).server_identity("nope")
