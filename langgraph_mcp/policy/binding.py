"""A decision bound to what it decided: signed where it was taken, checked by the tool node right before the call.

Anything a thread's client can write (run input, ``update_state`` as any node, ``Command(goto)``, message metadata)
could claim that a call was approved. So a decision only counts as a :class:`~langgraph_mcp.payloads.DecisionBinding`
signed with a key the client does not have: HMAC-SHA256 over the canonical JSON of the thread id, the tool call
id, the server's identity, the tool's :func:`~langgraph_mcp.catalog.definition_hash` and the
:func:`~langgraph_mcp.catalog.args_digest` of the arguments to be sent. The signature is made in the task that
received the human's answer through the interrupt (the gate's ``review``), or, for a policy's ``allow``, where the
policy judged the current definition; the tool node recomputes every field for the call it is about to send and
runs it only if all match.

Why a signature and not "read the resume value back": the decision is taken in the gate's task and used in the
tool node's, a different task (often a later step, maybe another worker); a signed record travels with the
message through any checkpointer and is verified without reading the checkpoint history. What it cannot stop is
a replay of the very same decision for the very same call (same thread, call id, server, definition and
arguments): the README's Security model says what that leaves a client with write access.

The key (:class:`ApprovalKey`): ``McpServersConfig.approval_key``, else ``LANGGRAPH_MCP_APPROVAL_KEY``, else this
machine's key: created once (random, owner-only permissions) in the user's data directory (``LANGGRAPH_MCP_DATA_DIR``,
else ``platformdirs.user_data_dir("langgraph-mcp")``), so a single process that restarts keeps its decisions; if
that directory cannot be written, a random key of this process. A decision signed with another key (another machine
or worker without the shared key) does not prove itself: it is asked again, and the question says which key to set.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from typing import Any, Literal, cast

from langgraph_mcp.catalog import McpTool, ToolDefinition, args_digest, canonical_json
from langgraph_mcp.config import ServerSpec
from langgraph_mcp.payloads import BindingVerdict, DecisionBinding, DefinitionChange

__all__ = [
    "APPROVAL_KEY_ENV",
    "DATA_DIR_ENV",
    "ApprovalKey",
    "binding_problem",
    "definition_changes",
    "machine_key",
    "server_identity",
]

APPROVAL_KEY_ENV = "LANGGRAPH_MCP_APPROVAL_KEY"
"""The environment variable holding the signing secret (the same on every worker of a deployment)."""

DATA_DIR_ENV = "LANGGRAPH_MCP_DATA_DIR"
"""Where this machine's approval key is kept (default: ``platformdirs.user_data_dir("langgraph-mcp")``)."""
_KEY_FILE = "approval.key"
_PROCESS_KEY = secrets.token_bytes(32)
"""The last fallback: random per process, so no decision signed elsewhere verifies with it."""
_machine_keys: dict[str, bytes] = {}


def machine_key() -> bytes | None:
    """This machine's approval key (created once, mode 0600), or ``None`` when its directory cannot be written."""
    directory = os.environ.get(DATA_DIR_ENV) or _user_data_dir()
    known = _machine_keys.get(directory)
    if known is not None:
        return known
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:  # no file I/O on an event loop (LangGraph Server refuses it): the key was read when this module loaded
        return None
    path = os.path.join(directory, _KEY_FILE)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # made before (or just now, by another process): read it
            pass
        else:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(secrets.token_hex(32))
        with open(path, encoding="ascii") as key_file:
            text = key_file.read().strip()
    except OSError:
        return None
    if len(text) < 32:  # being written by another process right now, or damaged: not this run's to decide
        return None
    key = _machine_keys[directory] = text.encode()
    return key


def _user_data_dir() -> str:
    import platformdirs  # only when no key is configured

    return str(platformdirs.user_data_dir("langgraph-mcp", appauthor=False))


_SIGNED_FIELDS = (
    "v",
    "verdict",
    "thread_id",
    "tool_call_id",
    "server",
    "server_identity",
    "tool",
    "definition_hash",
    "args_digest",
    "key_id",
)
_DEFINITION_FIELDS: tuple[
    Literal["name", "description", "inputSchema", "outputSchema", "annotations"], ...
] = (
    "name",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
)


class ApprovalKey:
    """The secret decisions are signed and verified with (``source``: ``config``, ``env``, ``machine`` or
    ``process``)."""

    def __init__(self, secret: str | bytes | None = None) -> None:
        if secret is None and (env := os.environ.get(APPROVAL_KEY_ENV)):
            secret, self.source = env, "env"
        elif secret is None:
            secret = machine_key()
            self.source = "machine" if secret is not None else "process"
        else:
            self.source = "config"
        key = _PROCESS_KEY if secret is None else secret.encode() if isinstance(secret, str) else secret
        self._key = key
        self.key_id = hashlib.sha256(b"langgraph-mcp approval key id\0" + key).hexdigest()[:16]
        """Names the key in bindings and messages (a digest: it tells nothing of the key)."""

    def sign(
        self,
        verdict: BindingVerdict,
        *,
        thread_id: str,
        tool_call_id: str,
        server: str,
        identity: str,
        tool: str,
        definition_hash: str,
        arguments: Mapping[str, Any] | None,
    ) -> DecisionBinding:
        """The signed binding of ``verdict`` to this call of ``server``'s ``tool`` (as defined by
        ``definition_hash``) with ``arguments``, on ``thread_id``."""
        fields: dict[str, Any] = {
            "v": 1,
            "verdict": verdict,
            "thread_id": thread_id,
            "tool_call_id": tool_call_id,
            "server": server,
            "server_identity": identity,
            "tool": tool,
            "definition_hash": definition_hash,
            "args_digest": args_digest(arguments),
            "key_id": self.key_id,
        }
        return cast(DecisionBinding, {**fields, "signature": self._mac(fields)})

    def seal(self, purpose: str, fields: Mapping[str, Any]) -> str:
        """The signature of another record this package keeps (e.g. a remembered decision), for ``purpose``."""
        return self._mac({"purpose": purpose, "fields": dict(fields)})

    def opens(self, purpose: str, fields: Mapping[str, Any], signature: object) -> bool:
        """Whether ``signature`` is this key's :meth:`seal` of ``fields`` for ``purpose``."""
        return isinstance(signature, str) and hmac.compare_digest(signature, self.seal(purpose, fields))

    def _mac(self, fields: Mapping[str, Any]) -> str:
        return hmac.new(self._key, canonical_json(dict(fields)).encode(), hashlib.sha256).hexdigest()

    def verifies(self, binding: Mapping[str, Any]) -> bool:
        """Whether ``binding`` carries a valid signature by this key."""
        signature = binding.get("signature")
        if not isinstance(signature, str) or binding.get("key_id") != self.key_id:
            return False
        fields = {name: binding.get(name) for name in _SIGNED_FIELDS}
        return hmac.compare_digest(signature, self._mac(fields))

    @property
    def hint(self) -> str:
        """What to do when a decision was signed with another key."""
        return (
            f"set {APPROVAL_KEY_ENV} (or McpServersConfig.approval_key, or Oversight(approval_key=...)) to one "
            "secret on every worker, so a decision taken by one worker proves itself on another"
        )


def server_identity(name: str, spec: ServerSpec, key: ApprovalKey) -> str:
    """``name`` plus a keyed hash of everything that selects the backend it reaches (the transport's
    :meth:`~langgraph_mcp.transports.base.Transport.binding`: a URL and every static header; a command line, its
    working directory and environment). A config that points the name elsewhere (another URL, another tenant's API
    key, ``env`` for prod instead of staging) is another server, and a decision about the old one does not carry
    over; nor does one taken under another ``key``.

    Keyed (HMAC with the approval key), so the values, often secrets, are never in clear and cannot be guessed back
    from the identity by anyone without the key (it is in payloads, records and the store)."""
    where = {"transport": spec.transport, **spec.binding()}
    return f"{name}#{key.seal('server identity', where)[:32]}"


def binding_problem(
    binding: Any,
    key: ApprovalKey,
    *,
    thread_id: str,
    tool_call_id: str,
    tool: McpTool,
    identity: str,
    arguments: Mapping[str, Any] | None,
) -> str | None:
    """Why ``binding`` does not prove that this call may run now; ``None`` when it does."""
    if not isinstance(binding, Mapping):
        return (
            "no decision about it was found that this graph signed (state a client writes is not a decision)"
        )
    if binding.get("key_id") != key.key_id:
        return (
            f"its decision was signed with another key (key id {binding.get('key_id')!r}; this process: "
            f"{key.key_id!r}): {key.hint}"
        )
    if not key.verifies(binding):
        return "the signature of its decision does not verify (the record was written outside the gate)"
    expected: dict[str, tuple[Any, str]] = {
        "thread_id": (thread_id, "it was decided on another thread"),
        "tool_call_id": (tool_call_id, f"it was decided for tool call {binding.get('tool_call_id')!r}"),
        "server_identity": (
            identity,
            f"it was decided for another server ({binding.get('server_identity')!r})",
        ),
        "tool": (tool.name, f"it was decided for tool {binding.get('tool')!r}"),
        "definition_hash": (tool.definition_hash, "the tool's definition changed since it was decided"),
        "args_digest": (args_digest(arguments), "its arguments are not the ones decided"),
    }
    for field, (value, why) in expected.items():
        if binding.get(field) != value:
            return why
    return None


def definition_changes(before: ToolDefinition | None, after: ToolDefinition) -> list[DefinitionChange]:
    """What differs between the definition a decision was made about and the current one (``before``: as shown)."""
    if not isinstance(before, Mapping):
        return []
    return [
        {"field": field, "before": before.get(field), "after": after[field]}
        for field in _DEFINITION_FIELDS
        if canonical_json(before.get(field)) != canonical_json(after[field])
    ]


machine_key()  # read (or made) once, as the module loads: a key asked for later on an event loop is already known
