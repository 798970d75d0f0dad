"""Adding a transport, as living documentation (issue 40): a dummy ``pipe`` transport — the mcp SDK's in-memory
stream pair to a server object of this process, under a new transport name — added through the protocol alone
(this module, and one ``register_transport`` line), then used from a config like any other: ``McpServers`` →
``McpToolNode`` runs calls over it, and the node's approval binds to what the transport says selects its backend.

And the trap it closes: a transport class that does not say what a decision binds to cannot be registered."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

import pytest
from langgraph.types import Command
from mcp import Client

# The SDK's own in-memory pipe (what its Client uses for a server object in the legacy era); a test may name it.
from mcp.client._memory import InMemoryTransport
from pydantic import Field

from langgraph_mcp import McpServers
from langgraph_mcp.approval.oversight import signer_for
from langgraph_mcp.cli.render import server_target
from langgraph_mcp.config import McpServersConfig
from langgraph_mcp.errors import ConfigError, TransportError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.policy.binding import server_identity
from langgraph_mcp.transports.base import TRANSPORTS, StartNotes, Transport, WatchStreams, register_transport
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages

pytestmark = pytest.mark.anyio


class PipeServer(Transport):
    """A server object of this process, reached over an in-memory stream pair (JSON-RPC, watched like stdio)."""

    transport: Literal["pipe"] = "pipe"
    """The tag; ``{"transport": "pipe", ...}`` in a config."""
    server: Any = Field(exclude=True)
    """The ``MCPServer`` at the other end of the pipe."""
    tenant: str = "default"
    """Which backend the server object serves (stands for a database URL, say): it selects the backend."""

    @classmethod
    def recognizes(cls, entry: Mapping[str, Any]) -> bool:
        return False  # only ever named: a "server" key alone still means in-process

    def binding(self) -> dict[str, Any]:
        return {"server": self.server.name, "tenant": self.tenant}

    def location(self) -> str:
        return f"pipe to {self.server.name}"

    def open_client(self, notes: StartNotes, watch: WatchStreams, common: dict[str, Any]) -> Client:
        return Client(watch(InMemoryTransport(self.server)), **common)


@pytest.fixture
def pipe_transport() -> Iterator[type[PipeServer]]:
    register_transport(PipeServer)  # the one line a new transport adds (in transports/__init__.py)
    yield PipeServer
    TRANSPORTS.pop("pipe")


async def test_a_call_runs_over_a_transport_added_through_the_protocol(
    open_servers: OpenServers, pipe_transport: type[PipeServer]
) -> None:
    srv = build_server()
    servers = open_servers({"piped": {"transport": "pipe", "server": srv, "tenant": "eu"}})
    assert isinstance(servers.config.servers["piped"], PipeServer)
    graph = one_turn_graph(servers, [call("piped_list_files", "c1")], StrictSaver())

    state = await graph.ainvoke(start(), {"configurable": {"thread_id": "t"}})

    assert "todo.txt" in text_of(tool_messages(state)["c1"])
    assert srv.events.counts["list_files.enter"] == 1  # the server's own record
    assert server_target(servers.config.servers["piped"]) == f"pipe to {srv.name}"  # the CLI's column


async def test_the_nodes_approval_binds_to_what_the_new_transport_says(
    open_servers: OpenServers, pipe_transport: type[PipeServer]
) -> None:
    srv = build_server()
    servers = open_servers({"piped": PipeServer(server=srv, tenant="eu")})
    graph = one_turn_graph(servers, [call("piped_delete_file", "c1", path="todo.txt")], StrictSaver())
    config = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), config)
    [pending] = out["__interrupt__"]
    assert srv.events.counts["delete_file.enter"] == 0

    await graph.ainvoke(Command(resume={pending.id: {"type": "approve"}}), config)

    assert srv.events.counts["delete_file.enter"] == 1
    signer = signer_for(servers)
    identity = signer.server_identity("piped")
    assert identity == server_identity("piped", servers.config.servers["piped"], signer.key)
    other = PipeServer(server=srv, tenant="us")
    assert server_identity("piped", other, signer.key) != identity  # the tenant selects the backend
    assert "eu" not in identity


class NoBinding(Transport):
    """Says how to open a client and where it is, but not what a decision about its server binds to."""

    transport: Literal["nobinding"] = "nobinding"
    """The tag."""

    def location(self) -> str:
        return "nowhere"

    def open_client(self, notes: StartNotes, watch: WatchStreams, common: dict[str, Any]) -> Client:
        raise AssertionError("never opened")


def test_a_transport_that_does_not_say_what_a_decision_binds_to_cannot_be_registered() -> None:
    with pytest.raises(TransportError, match=r"does not implement binding .*selects the backend"):
        register_transport(NoBinding)
    assert "nobinding" not in TRANSPORTS
    with pytest.raises(TypeError):  # nor made: the method is abstract
        NoBinding()  # type: ignore[abstract]
    with pytest.raises(ConfigError, match="unknown transport 'nobinding'"):
        McpServersConfig.load({"x": {"transport": "nobinding"}})


def test_a_transport_cannot_take_another_ones_tag(pipe_transport: type[PipeServer]) -> None:
    class Impostor(PipeServer):
        """Another class under the same tag."""

    with pytest.raises(TransportError, match="'pipe' of Impostor is PipeServer's"):
        register_transport(Impostor)
    assert TRANSPORTS["pipe"] is PipeServer


def test_an_unregistered_transport_is_refused_in_a_config() -> None:
    spec = PipeServer(server=build_server())
    with pytest.raises(ConfigError, match="PipeServer is not registered"):
        McpServers({"piped": spec})
