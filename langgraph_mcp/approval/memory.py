"""Remembered decisions: an approval or rejection given with ``remember`` answers later calls of the same tool.

A human may answer an ``mcp_approval`` interrupt with ``{"type": "approve", "remember": "thread"}`` (or
``"principal"``; ``reject`` too). Later calls of the same server's same tool, whose
:func:`~langgraph_mcp.catalog.definition_hash` is unchanged (and, when the rule says ``remember = "same_args"``,
whose :func:`~langgraph_mcp.catalog.args_digest` is the same), then get that decision without anyone being asked.
A changed definition (or a server name pointed elsewhere) voids the entry: the call is asked about again, and the
void entry is deleted. Memory never answers a locked rule's ``ask``, nor a rule with ``remember = "off"``, nor a
call to no MCP server; it never turns a ``deny`` into anything.

**Where it is kept.** In the graph's LangGraph store (``compile(store=...)``, Agent Server's store), under one
namespace::

    ("langgraph_mcp", "approvals", "thread", <thread id>)       key "<server>/<tool>"  (or "<server>/<tool>/<args digest>")
    ("langgraph_mcp", "approvals", "principal", <principal>)

(the owner as a :func:`~langgraph_mcp.credentials.namespace_label`: ``.`` written ``%2E``, ``%`` as ``%25``;
LangGraph refuses dots in namespace labels). Without a
store, ``"principal"`` memory is not offered (an answer asking for it is refused before it is saved, with a clear
error, and the same interrupt stays answerable) and ``"thread"`` memory lives in the thread's messages
(``response_metadata["mcp_memory"]`` of the message the gate or middleware answers with), so it lasts as long as
the thread and cannot be revoked except by a later remembered decision. The principal is
:meth:`~langgraph_mcp.policy.policy.ApprovalPolicy.principal_for` (``langgraph_auth_user_id``, else ``user_id``,
or the policy's ``principal`` callable).

**Why it can be trusted.** Every entry is signed with the servers' approval key
(:class:`~langgraph_mcp.policy.binding.ApprovalKey`) over all of its fields, its scope and owner included. An entry
written by anyone else (a client of the thread, a store API caller), copied to another principal or thread, or
made about another definition does not verify and counts for nothing: the call is asked about. A remembered
approval reaches the tool node as the gate's signed binding of that one call, which the node checks right before
``tools/call`` like any other decision. What the signature cannot stop is someone with write access to the store
putting back an entry they read before it was revoked: keep ``("langgraph_mcp", ...)`` out of clients' reach
(Agent Server: an ``@auth.on.store`` handler).

:func:`list_approvals` and :func:`revoke_approvals` (and ``langgraph-mcp approvals list|revoke``) read and delete
entries on any ``BaseStore``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from langgraph_mcp.catalog import McpTool, args_digest
from langgraph_mcp.credentials import label_value, namespace_label
from langgraph_mcp.errors import DecisionError
from langgraph_mcp.payloads import (
    ApprovalInterrupt,
    Decision,
    RememberedDecision,
    RememberScope,
)
from langgraph_mcp.policy.binding import APPROVAL_KEY_ENV, ApprovalKey
from langgraph_mcp.policy.policy import Verdict
from langgraph_mcp.questions.approval import with_remember_field

__all__ = [
    "MEMORY_METADATA_KEY",
    "MEMORY_NAMESPACE",
    "Recall",
    "StoredApproval",
    "arecall",
    "aremember",
    "entry_key",
    "genuine_entry",
    "list_approvals",
    "memory_key",
    "memory_namespace",
    "offer",
    "recall",
    "remember",
    "revoke_approvals",
    "signed_entry",
    "thread_entries",
    "with_offer",
]

MEMORY_NAMESPACE: tuple[str, str] = ("langgraph_mcp", "approvals")
"""The store namespace prefix of every remembered decision: ``(*MEMORY_NAMESPACE, scope, owner)``."""
MEMORY_METADATA_KEY = "mcp_memory"
"""Where thread memory is kept without a store: a list of entries in a message's ``response_metadata``."""
_PURPOSE = "remembered-decision"
_SIGNED = (
    "v",
    "published_name",
    "owner_origin",
    "scope",
    "owner",
    "server",
    "server_identity",
    "tool",
    "definition_hash",
    "args_digest",
    "decision",
    "message",
    "rule",
    "decided_at",
    "tool_call_id",
    "key_id",
)
_PAGE = 500


def memory_namespace(scope: RememberScope, owner: str | None = None) -> tuple[str, ...]:
    """The namespace of ``owner``'s remembered decisions (without ``owner``: of every owner of ``scope``)."""
    return (*MEMORY_NAMESPACE, scope) if owner is None else (*MEMORY_NAMESPACE, scope, namespace_label(owner))


def memory_key(server: str, tool: str, digest: str | None = None) -> str:
    """The key of the decision about ``server``'s ``tool`` (with ``digest``: about those arguments only)."""
    return f"{server}/{tool}" if digest is None else f"{server}/{tool}/{digest}"


# ------------------------------------------------------------------------------------------------ offering


def offer(
    verdict: Verdict,
    tool: McpTool | None,
    *,
    has_store: bool,
    thread_id: str,
    principal: str | None,
    key: ApprovalKey | None = None,
) -> tuple[list[RememberScope], dict[str, str]]:
    """The scopes an answer to this ``ask`` may remember, and why the others are not offered.

    With ``key`` (the approval key a remembered decision would be signed with): only scopes the next process can
    honour; with this process's random key (no shared key and no writable data directory) nothing is offered, and
    the reason names the key to set."""
    if not verdict.needs_approval or tool is None:
        return [], {}
    if key is not None and key.source == "process":
        why = (
            f"the approval key is this process's own (no {APPROVAL_KEY_ENV} and the data directory cannot be "
            f"written): a remembered decision would last for this process only; set {APPROVAL_KEY_ENV}"
        )
        return [], {"thread": why, "principal": why}
    if verdict.locked:
        why = f"rule {verdict.rule!r} is locked: it is asked about every time"
        return [], {"thread": why, "principal": why}
    if verdict.remember == "off":
        why = f"rule {verdict.rule!r} says remember = 'off'"
        return [], {"thread": why, "principal": why}
    scopes: list[RememberScope] = []
    unavailable: dict[str, str] = {}
    if thread_id:
        scopes.append("thread")
    else:
        unavailable["thread"] = "the run has no thread id"
    if not has_store:
        unavailable["principal"] = (
            "remembering for a principal needs the graph's LangGraph store (compile(store=...), or Agent Server's): "
            "this graph has none"
        )
    elif not principal:
        unavailable["principal"] = (
            "the run has no principal (configurable langgraph_auth_user_id or user_id, or the policy's principal)"
        )
    else:
        scopes.append("principal")
    return scopes, unavailable


def with_offer(
    payload: ApprovalInterrupt,
    verdict: Verdict,
    scopes: list[RememberScope],
    unavailable: dict[str, str],
) -> None:
    """Put the offer in the approval payload (nothing when nothing is offered and nothing explained)."""
    if scopes:
        payload["remember"] = list(scopes)
        payload["remember_covers"] = "same_args" if verdict.remember == "same_args" else "any_args"
    if unavailable:
        payload["remember_unavailable"] = dict(unavailable)
    with_remember_field(payload)  # Agent Chat UI cards: a Remember box


# ------------------------------------------------------------------------------------------------ entries


def _fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {name: entry.get(name) for name in _SIGNED}


_KEPT_ESCAPED = re.compile(r"[%\x00]")
_KEPT_ESCAPE = re.compile(r"%(25|00)")


def _kept(entry: Mapping[str, Any]) -> dict[str, Any]:
    """``entry`` as the store keeps it: in its strings ``%`` as ``%25`` and NUL as ``%00``.

    A principal or a tool call id is any string a client sends, and PostgreSQL's ``jsonb`` refuses ``\\u0000``;
    the escape is undone by :func:`_read` before the signature is checked, so what is verified is what was signed."""
    return {
        name: _KEPT_ESCAPED.sub(lambda m: "%25" if m.group() == "%" else "%00", value)
        if isinstance(value, str)
        else value
        for name, value in entry.items()
    }


def _read(value: object) -> object:
    """A stored entry as :func:`_kept` was given it (anything else as it is: it will not verify)."""
    if not isinstance(value, Mapping):
        return value
    return {
        name: _KEPT_ESCAPE.sub(lambda m: "%" if m.group(1) == "25" else "\x00", item)
        if isinstance(item, str)
        else item
        for name, item in value.items()
    }


def signed_entry(
    key: ApprovalKey,
    *,
    scope: RememberScope,
    owner: str,
    server: str,
    identity: str,
    tool: str,
    definition_hash: str,
    decision: Decision,
    arguments: Mapping[str, Any] | None,
    same_args: bool,
    rule: str,
    now: float,
    tool_call_id: str,
    published_name: str | None = None,
    owner_origin: str | None = None,
) -> RememberedDecision:
    """The signed entry remembering ``decision`` (an approve or a reject) about ``server``'s ``tool`` as defined by
    ``definition_hash`` (``identity``: :func:`~langgraph_mcp.policy.binding.server_identity`)."""
    kind = decision["type"]
    if kind not in ("approve", "reject"):
        raise DecisionError(f"only approve and reject decisions are remembered, not {kind!r}")
    message = decision.get("message") if kind == "reject" else None
    fields: dict[str, Any] = {
        "v": 1,
        "scope": scope,
        "owner": owner,
        "server": server,
        "server_identity": identity,
        "tool": tool,
        "definition_hash": definition_hash,
        "args_digest": args_digest(arguments) if same_args else None,
        "decision": kind,
        "message": message if isinstance(message, str) else None,
        "rule": rule,
        "decided_at": float(now),
        "tool_call_id": tool_call_id,
        "key_id": key.key_id,
    }
    if published_name is not None:  # the name people see (``approvals revoke --tool``)
        fields["published_name"] = published_name
    if owner_origin is not None:  # a principal's: authenticated, or asserted by a client
        fields["owner_origin"] = owner_origin
    return cast(RememberedDecision, {**fields, "signature": key.seal(_PURPOSE, _fields(fields))})


def _verifies(entry: object, key: ApprovalKey) -> bool:
    return (
        isinstance(entry, Mapping)
        and entry.get("key_id") == key.key_id
        and key.opens(_PURPOSE, _fields(entry), entry.get("signature"))
    )


def genuine_entry(entry: object, key: ApprovalKey, tool: McpTool) -> RememberedDecision | None:
    """``entry`` if this package sealed it with ``key`` about ``tool`` as defined now, else ``None``."""
    if not _verifies(entry, key):
        return None
    assert isinstance(entry, Mapping)
    if (entry.get("server"), entry.get("tool"), entry.get("definition_hash")) != (
        tool.server,
        tool.name,
        tool.definition_hash,
    ):
        return None
    return cast(RememberedDecision, entry)


def entry_key(entry: RememberedDecision) -> str:
    """The store key ``entry`` is kept under."""
    return memory_key(entry["server"], entry["tool"], entry["args_digest"])


def thread_entries(messages: Iterable[BaseMessage]) -> list[Any]:
    """The thread memory kept in ``messages`` (no store): unchecked, as found."""
    found: list[Any] = []
    for message in messages:
        kept = getattr(message, "response_metadata", None)
        entries = kept.get(MEMORY_METADATA_KEY) if isinstance(kept, Mapping) else None
        if isinstance(entries, list):
            found.extend(entries)
    return found


# ------------------------------------------------------------------------------------------------ recalling


@dataclass(frozen=True)
class Recall:
    """The remembered decision that answers a call (``entry``), and the void entries found on the way."""

    entry: RememberedDecision | None
    void: tuple[tuple[tuple[str, ...], str], ...] = ()
    """``(namespace, key)`` of verified store entries about another definition or server: deleted."""

    @property
    def decision(self) -> Decision | None:
        """The decision to apply (``None``: ask)."""
        if self.entry is None:
            return None
        if self.entry["decision"] == "approve":
            return {"type": "approve"}
        message = self.entry.get("message")
        return {"type": "reject", "message": message} if message else {"type": "reject"}


@dataclass(frozen=True)
class _Lookup:
    tool: McpTool
    identity: str
    key: ApprovalKey
    owners: tuple[tuple[RememberScope, str], ...]
    store_key: str
    digest: str | None

    def gets(self) -> list[Any]:
        return [GetOp(memory_namespace(scope, owner), self.store_key) for scope, owner in self.owners]

    def judge(self, items: Sequence[Item | None], kept: Iterable[Any]) -> Recall:
        valid: list[RememberedDecision] = []
        void: list[tuple[tuple[str, ...], str]] = []
        for (scope, owner), item in zip(self.owners, items, strict=True):
            if item is None:
                continue
            value = _read(item.value)
            verdict = self._applies(value, scope, owner)
            if verdict == "yes":
                valid.append(cast(RememberedDecision, value))
            elif verdict == "void":
                void.append((tuple(item.namespace), item.key))
        thread = dict(self.owners).get("thread")
        for entry in kept:
            if thread is not None and self._applies(entry, "thread", thread) == "yes":
                valid.append(cast(RememberedDecision, entry))
        best = max(valid, key=lambda e: e["decided_at"], default=None)
        return Recall(best, tuple(void))

    def _applies(self, entry: object, scope: RememberScope, owner: str) -> str:
        """``yes``; ``void`` (a genuine entry about another definition or server); or ``no`` (not ours: ignored)."""
        if not _verifies(entry, self.key):
            return "no"
        assert isinstance(entry, Mapping)
        if (
            entry.get("scope") != scope
            or entry.get("owner") != owner
            or entry.get("server") != self.tool.server
            or entry.get("tool") != self.tool.name
            or entry.get("args_digest") != self.digest
            or entry.get("decision") not in ("approve", "reject")
        ):
            return "no"
        if (
            entry.get("definition_hash") != self.tool.definition_hash
            or entry.get("server_identity") != self.identity
        ):
            return "void"
        return "yes"


def _lookup(
    key: ApprovalKey,
    verdict: Verdict,
    tool: McpTool | None,
    identity: str,
    thread_id: str,
    principal: str | None,
    arguments: Mapping[str, Any] | None,
    has_store: bool,
) -> _Lookup | None:
    scopes, _ = offer(verdict, tool, has_store=has_store, thread_id=thread_id, principal=principal)
    if not scopes or tool is None:
        return None
    owners = tuple((scope, thread_id if scope == "thread" else principal or "") for scope in scopes)
    digest = args_digest(arguments) if verdict.remember == "same_args" else None
    return _Lookup(tool, identity, key, owners, memory_key(tool.server, tool.name, digest), digest)


def _recalling(
    lookup: _Lookup | None, messages: Iterable[BaseMessage], has_store: bool
) -> Generator[list[Any], list[Any], Recall]:
    """Recalling without the I/O: yields the store batches to run (each is sent back its results)."""
    if lookup is None:
        return Recall(None)
    if not has_store:
        return lookup.judge([None] * len(lookup.owners), thread_entries(messages))
    result = lookup.judge((yield lookup.gets()), ())
    if result.void:
        yield [PutOp(ns, k, None) for ns, k in result.void]
    return result


def recall(
    store: BaseStore | None,
    messages: Iterable[BaseMessage],
    key: ApprovalKey,
    verdict: Verdict,
    tool: McpTool | None,
    *,
    identity: str,
    thread_id: str,
    principal: str | None,
    arguments: Mapping[str, Any] | None,
) -> Recall:
    """The remembered decision that answers this ``ask`` (the newest that applies), if any; void store entries found
    on the way are deleted. Never answers a verdict that is not an unlocked ``ask``."""
    lookup = _lookup(key, verdict, tool, identity, thread_id, principal, arguments, store is not None)
    steps = _recalling(lookup, messages, store is not None)
    try:
        ops = next(steps)
        while True:  # only a lookup in a store yields
            ops = steps.send(list(cast(BaseStore, store).batch(ops)))
    except StopIteration as done:
        return cast(Recall, done.value)


async def _abatch(store: BaseStore, ops: list[Any]) -> list[Any]:
    try:
        return list(await store.abatch(ops))
    except NotImplementedError:  # a sync-only store (SqliteStore): its sync API from a worker thread
        return list(await asyncio.to_thread(store.batch, ops))


async def arecall(
    store: BaseStore | None,
    messages: Iterable[BaseMessage],
    key: ApprovalKey,
    verdict: Verdict,
    tool: McpTool | None,
    *,
    identity: str,
    thread_id: str,
    principal: str | None,
    arguments: Mapping[str, Any] | None,
) -> Recall:
    """:func:`recall` for async code (works with sync-only stores too)."""
    lookup = _lookup(key, verdict, tool, identity, thread_id, principal, arguments, store is not None)
    steps = _recalling(lookup, messages, store is not None)
    try:
        ops = next(steps)
        while True:  # only a lookup in a store yields
            ops = steps.send(await _abatch(cast(BaseStore, store), ops))
    except StopIteration as done:
        return cast(Recall, done.value)


# ------------------------------------------------------------------------------------------------ remembering


def remember(store: BaseStore | None, entry: RememberedDecision) -> bool:
    """Keep ``entry`` in the store (``True``); without a store, ``False``: the caller keeps a ``thread`` entry in the
    message it answers with (``response_metadata[MEMORY_METADATA_KEY]``)."""
    if store is None:
        if entry["scope"] == "principal":  # refused before the answer was saved; never silently dropped
            raise DecisionError("a principal's remembered decision needs the graph's LangGraph store")
        return False
    store.put(memory_namespace(entry["scope"], entry["owner"]), entry_key(entry), _kept(entry), index=False)
    return True


async def aremember(store: BaseStore | None, entry: RememberedDecision) -> bool:
    """:func:`remember` for async code."""
    if store is None:
        return remember(None, entry)
    namespace = memory_namespace(entry["scope"], entry["owner"])
    await _abatch(store, [PutOp(namespace, entry_key(entry), _kept(entry), index=False)])
    return True


# ------------------------------------------------------------------------------------------------ listing


@dataclass(frozen=True)
class StoredApproval:
    """One remembered decision as found in a store."""

    scope: str
    owner: str
    key: str
    entry: dict[str, Any]
    updated_at: str
    """When it was written (ISO 8601, the store's clock)."""

    def verifiable(self, key: ApprovalKey) -> bool:
        """Whether ``key`` proves this entry (else it was signed with another key, or rewritten: it is ignored)."""
        return _verifies(self.entry, key)

    @classmethod
    def of(cls, item: Item) -> StoredApproval:
        scope, label = item.namespace[-2:]
        entry = _read(item.value)
        assert isinstance(entry, Mapping)  # a store item's value is a dict
        signed = entry.get("owner")
        owner = signed if isinstance(signed, str) and namespace_label(signed) == label else label_value(label)
        return cls(scope, owner, item.key, dict(entry), item.updated_at.isoformat(timespec="seconds"))


def _search(store: BaseStore, prefix: tuple[str, ...]) -> list[Item]:
    found: list[Item] = []
    while True:
        page = store.search(prefix, limit=_PAGE, offset=len(found))
        found.extend(page)
        if len(page) < _PAGE:
            return found


def list_approvals(
    store: BaseStore, *, scope: RememberScope | None = None, owner: str | None = None
) -> list[StoredApproval]:
    """Every remembered decision in ``store`` (of ``scope``, and of ``owner`` with it), oldest first."""
    if owner is not None and scope is None:
        raise ValueError("list_approvals: give the scope ('thread' or 'principal') with the owner")
    prefix = MEMORY_NAMESPACE if scope is None else memory_namespace(scope, owner)
    depth = len(MEMORY_NAMESPACE) + 2
    found = [StoredApproval.of(item) for item in _search(store, prefix) if len(item.namespace) == depth]
    return sorted(found, key=lambda a: (a.updated_at, a.scope, a.owner, a.key))


def revoke_approvals(
    store: BaseStore,
    *,
    scope: RememberScope | None = None,
    owner: str | None = None,
    server: str | None = None,
    tool: str | None = None,
    key: str | None = None,
) -> list[StoredApproval]:
    """Delete the remembered decisions that match every filter given (none given: all of them); returns them.

    ``key`` is the store key (``<server>/<tool>`` or ``<server>/<tool>/<args digest>``); ``server`` and ``tool``
    match the entry's server and its tool: the server's own name or the published one (what the model calls)."""
    gone = [
        a
        for a in list_approvals(store, scope=scope, owner=owner)
        if (server is None or a.entry.get("server") == server)
        and (tool is None or tool in (a.entry.get("tool"), a.entry.get("published_name")))
        and (key is None or a.key == key)
    ]
    if gone:
        store.batch(
            [PutOp(memory_namespace(cast(RememberScope, a.scope), a.owner), a.key, None) for a in gone]
        )
    return gone
