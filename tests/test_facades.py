"""The facades stay thin (issue 18): ``McpServers``' public surface is what a user calls, the package's own parts
reach the rest through ``ServerAccess``, and a ``ServerConnection`` does not pass its owner's members through."""

from __future__ import annotations

from pathlib import Path

from langgraph_mcp import McpServers
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.owner import ClientOwner
from langgraph_mcp.servers.access import ServerAccess

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "langgraph_mcp"

USER_API = {
    "aclose", "cached_tool", "cached_tools", "call_tool", "close", "closed", "complete_sign_in", "config",
    "get_prompt", "get_tool", "get_tools", "list_prompts", "list_resource_templates", "list_resources",
    "list_tools", "names", "on_connection_error", "read_resource", "report", "resolve_tool", "run_sync",
    "server_status", "spec",
}  # fmt: skip
"""What the README, the notebooks, the CLI and users call on ``McpServers``."""


def public_names(cls: type, instance: object | None = None) -> set[str]:
    names = {name for name in dir(cls) if not name.startswith("_")}
    if instance is not None:
        names |= {name for name in vars(instance) if not name.startswith("_")}
    return names


def test_mcp_servers_public_surface_is_the_user_api() -> None:
    servers = McpServers({"servers": {}})
    assert public_names(McpServers, servers) == USER_API


def test_the_internal_operations_are_on_server_access_not_mcp_servers() -> None:
    internal = {
        "connection",
        "paused_rounds",
        "identity",
        "using",
        "call_target",
        "routing_for",
        "server_identity",
    }
    assert internal <= public_names(ServerAccess)
    assert not internal & public_names(McpServers)


def test_server_connection_does_not_pass_its_owner_through() -> None:
    owner_members = public_names(ClientOwner) - {"name", "spec"}
    passed_through = owner_members & public_names(ServerConnection)
    assert passed_through == set(), f"read these from conn.owner: {sorted(passed_through)}"
