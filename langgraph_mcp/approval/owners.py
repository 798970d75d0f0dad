"""Which server a called name belongs to, as the gate sees it: every way of not knowing becomes a reason to ask.

The gate never concludes "not an MCP tool" from a failed lookup. Whatever the lookup raises (a server error, a
cut response surfacing as ``CancelledError``, anything unexpected) is a *problem*, and a call with a problem gets
the policy's ``unresolved`` verdict (``ask`` by default, never ``allow``). Only a name that no candidate server's
current listing contains, with every candidate listed, is a non-MCP call. Two servers publishing one name are a
collision: denied, since no human could tell which one would run.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import ToolCall

from langgraph_mcp.approval.records import GateRecord, GateVerdict
from langgraph_mcp.catalog import McpTool, ToolResolution
from langgraph_mcp.errors import AuthorizationRequiredError, ServersClosedError
from langgraph_mcp.payloads import DecisionBinding
from langgraph_mcp.policy.policy import ApprovalPolicy, Verdict
from langgraph_mcp.servers.names import NameResolver

__all__ = [
    "Owner",
    "cached_owners",
    "establish_owner",
    "establish_owners",
    "owner_of",
    "owner_verdict",
    "record_for",
]


@dataclass(frozen=True)
class Owner:
    """What the gate knows about who publishes one called name."""

    name: str
    tool: McpTool | None
    """The one listed tool with this name, if any."""
    problem: str | None = None
    """Why another (or any) server can't be ruled out; ``None`` when the owner is established."""
    collision: str | None = None
    """Set when several servers publish the name."""
    sign_in: AuthorizationRequiredError | None = None
    """A server that may publish it needs the run's principal to sign in first (then it can be looked up)."""


async def establish_owner(names: NameResolver, name: str) -> Owner:
    """Look ``name`` up, turning every failure into ``Owner.problem`` (the caller's own cancellation aside)."""
    try:
        resolution = await names.resolve(name)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        return Owner(name, None, problem="the tool lookup was cut short (CancelledError)")
    except ServersClosedError:  # the program's mistake: raised to the caller, not asked about
        raise
    except Exception as exc:
        return Owner(name, None, problem=f"the tool lookup failed ({type(exc).__name__}: {exc})")
    return owner_of(resolution)


def cached_owners(resolver: NameResolver, names: Sequence[str]) -> dict[str, Owner] | None:
    """:func:`establish_owners` without I/O when every candidate listing is fresh, else ``None``."""
    owners: dict[str, Owner] = {}
    for name in dict.fromkeys(names):
        try:
            resolution = resolver.cached_resolution(name)
        except ServersClosedError:
            raise
        except Exception:  # anything odd: take the full (fail-closed) path
            return None
        if resolution is None:
            return None
        owners[name] = owner_of(resolution)
    return owners


def owner_of(resolution: ToolResolution) -> Owner:
    """What a resolution says about who publishes its name (collision, problem, or the one tool)."""
    name = resolution.published_name
    if len(resolution.tools) > 1:
        where = ", ".join(f"server {t.server!r} (tool {t.name!r})" for t in resolution.tools)
        return Owner(name, None, collision=f"{name!r} is published by more than one server: {where}")
    tool = resolution.tools[0] if resolution.tools else None
    problem = None
    if resolution.unknown:
        why = "; ".join(f"server {server!r}: {detail}" for server, detail in resolution.unknown.items())
        problem = f"a server that may publish it could not be checked ({why})"
    return Owner(name, tool, problem=problem, sign_in=resolution.sign_in if tool is None else None)


async def establish_owners(resolver: NameResolver, names: Sequence[str]) -> dict[str, Owner]:
    return {name: await establish_owner(resolver, name) for name in dict.fromkeys(names)}


def owner_verdict(
    policy: ApprovalPolicy, call: ToolCall, owner: Owner, *, principal: str | None = None
) -> Verdict:
    """The policy's verdict for ``call``, made fail-closed by what is not known about its owner."""
    if owner.collision is not None:
        return Verdict.deny(f"{owner.collision}; rename or filter one of them", rule="collision")
    if owner.problem is not None and owner.tool is None:
        return policy.unresolved_verdict(call, owner.problem, principal=principal)
    verdict = policy.verdict(call, owner.tool, principal=principal)
    if owner.problem is None or verdict.denied:
        return verdict
    assert owner.tool is not None
    reason = (
        f"{verdict.reason}; listed by server {owner.tool.server!r}, but {owner.problem}"
        if verdict.reason
        else f"listed by server {owner.tool.server!r}, but {owner.problem}"
    )
    if policy.unresolved == "deny":
        return Verdict.deny(reason, rule="unresolved")
    if verdict.needs_approval:
        return dataclasses.replace(verdict, reason=reason)
    return Verdict.ask(reason, tuple(policy.default_decisions), rule="unresolved")


def record_for(
    tool: McpTool | None, verdict: GateVerdict, binding: DecisionBinding | None = None
) -> GateRecord:
    """The gate record of a call that may run: the server and tool it was judged as (``None``: no MCP tool),
    its signed ``binding`` and the definition it was judged on."""
    if tool is None:
        return {"server": None, "tool": None, "verdict": verdict}
    record: GateRecord = {
        "server": tool.server,
        "tool": tool.name,
        "verdict": verdict,
        "definition": tool.definition,
    }
    if binding is not None:
        record["binding"] = binding
    return record
