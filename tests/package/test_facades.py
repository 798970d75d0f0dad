"""The facades stay thin (issue 18, issue 40): ``McpServers``' public surface is what a user calls, the package's own
parts reach the rest through ``ServerAccess``, which hands out its parts instead of forwarding to them, and a
``ServerConnection`` does not pass its owner's members through."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

from langgraph_mcp import McpServers
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.owner import ClientOwner
from langgraph_mcp.servers.access import ServerAccess

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "langgraph_mcp"

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
    servers = McpServers({"servers": {}})
    internal = {"connections", "listings", "interceptors", "target", "call_target", "run_metadata"}
    assert internal <= public_names(ServerAccess, servers._access)
    assert not internal & public_names(McpServers, servers)


def _forwards(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function``'s body is one ``self.<part>.<method>(...)`` call handed back (docstring aside)."""
    body = [
        statement
        for statement in function.body
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Return | ast.Expr):
        return False
    value = body[0].value
    if isinstance(value, ast.Await):
        value = value.value
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Attribute)
        and isinstance(value.func.value.value, ast.Name)
        and value.func.value.value.id == "self"
    )


def test_server_access_hands_out_its_parts_instead_of_forwarding_to_them() -> None:
    tree = ast.parse(textwrap.dedent(inspect.getsource(ServerAccess)))
    [cls] = tree.body
    assert isinstance(cls, ast.ClassDef)
    forwarders = [
        node.name
        for node in cls.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _forwards(node)
    ]
    assert forwarders == [], f"call the part that does the work instead: {forwarders}"


def test_server_connection_does_not_pass_its_owner_through() -> None:
    owner_members = public_names(ClientOwner) - {"name", "spec"}
    passed_through = owner_members & public_names(ServerConnection)
    assert passed_through == set(), f"read these from conn.owner: {sorted(passed_through)}"
