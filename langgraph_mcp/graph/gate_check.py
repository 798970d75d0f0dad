"""The approval gate's ``check`` node: the owner of every pending call, sign-ins first, one verdict each.

``check`` runs once per model turn (it is not re-run when a review resumes). It establishes each call's owner
fail-closed (:mod:`langgraph_mcp.approval.owners`), asks for a sign-in a server needs before its tool can even be
looked up, and judges every call with the policy: allowed calls get a signed record, denied ones a reason, an unlocked ``ask``
that a remembered decision answers (:mod:`langgraph_mcp.approval.memory`) gets that decision (an approval as a record
signed here), and every other ``ask`` becomes an ``mcp_approval`` payload (offering the ``remember`` scopes) for a
``review`` task. :class:`GateCheck` also holds what the
other nodes and :func:`~langgraph_mcp.graph.gate.route_through_gate` share: the lookups and the signing key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.store.base import BaseStore

from langgraph_mcp._compat import has_checkpointer
from langgraph_mcp.approval.judge import ask_payload, mind_client_principal
from langgraph_mcp.approval.memory import Recall, arecall, offer, recall, with_offer
from langgraph_mcp.approval.oversight import signer_for
from langgraph_mcp.approval.owners import Owner, cached_owners, establish_owners, owner_verdict, record_for
from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.catalog import McpTool, ToolDefinition
from langgraph_mcp.graph.gate_state import REVIEW, Review, of_calls
from langgraph_mcp.graph.messages import GateRecord, messages_of, pending_calls
from langgraph_mcp.payloads import (
    ApprovalInterrupt,
    BindingVerdict,
    Decision,
    DecisionBinding,
    RememberedDecision,
)
from langgraph_mcp.policy.policy import ApprovalPolicy, Verdict
from langgraph_mcp.questions.agent_chat_ui import QuestionShapes
from langgraph_mcp.questions.sign_in import MAX_SIGN_INS_PER_CALL, authorization_payload, sign_in_result
from langgraph_mcp.servers.identities import current_store
from langgraph_mcp.servers.mcp_servers import McpServers, server_access

__all__ = ["GateCheck"]


class GateCheck:
    """One gate bound to its servers, policy and options: the ``check`` node and the lookups it shares."""

    def __init__(
        self, servers: McpServers, policy: ApprovalPolicy, *, shapes: QuestionShapes, messages_key: str
    ) -> None:
        self.servers = servers
        self._access = server_access(servers)
        self.signer = signer_for(servers)
        """Signs the records of the calls it lets through (the tool node verifies them)."""
        self.policy = policy
        self.shapes = shapes
        self.messages_key = messages_key

    # -- tool lookups -------------------------------------------------------------------------------

    async def aowners(self, calls: Sequence[ToolCall]) -> dict[str, Owner]:
        return await establish_owners(self._access.names, [c["name"] for c in calls]) if calls else {}

    def owners(self, calls: Sequence[ToolCall]) -> dict[str, Owner]:
        if not calls:
            return {}
        names = [c["name"] for c in calls]
        cached = cached_owners(self._access.names, names)  # no thread hop when the catalog already knows
        if cached is not None:
            return cached
        return self._access.run_sync(lambda: establish_owners(self._access.names, names))

    # -- check ----------------------------------------------------------------------------------------

    def calls(self, state: Any) -> list[ToolCall]:
        """Every runnable pending call: judged on every pass, whatever record it carries (a record is a claim
        anyone who can write the thread can make; see :mod:`langgraph_mcp.policy.binding`)."""
        return pending_calls(messages_of(state, self.messages_key)).runnable

    def sign(
        self,
        verdict: BindingVerdict,
        call_id: str,
        server: str,
        tool: str,
        definition_hash: str,
        arguments: Mapping[str, Any] | None,
        config: RunnableConfig,
    ) -> DecisionBinding:
        """Bind ``verdict`` to this call, signed with the servers' approval key (checked by the tool node)."""
        return self.signer.key.sign(
            verdict,
            thread_id=str(config.get("configurable", {}).get("thread_id", "")),
            tool_call_id=call_id,
            server=server,
            identity=self.signer.server_identity(server),
            tool=tool,
            definition_hash=definition_hash,
            arguments=arguments,
        )

    def allow_record(self, call: ToolCall, tool: McpTool | None, config: RunnableConfig) -> GateRecord:
        """The record of a call the policy allowed: bound to the definition it was judged on and its args."""
        if tool is None:
            return record_for(None, "allow")
        binding = self.sign(
            "allow",
            call.get("id") or "",
            tool.server,
            tool.name,
            tool.definition_hash,
            call.get("args"),
            config,
        )
        return record_for(tool, "allow", binding)

    def remembered_record(
        self, call: ToolCall, tool: McpTool, config: RunnableConfig, entry: RememberedDecision | None
    ) -> GateRecord:
        """The record of a call a remembered approval answers: signed here, where the entry was verified."""
        binding = self.sign(
            "remembered",
            call.get("id") or "",
            tool.server,
            tool.name,
            tool.definition_hash,
            call.get("args"),
            config,
        )
        record = record_for(tool, "approve", binding)
        if (
            entry is not None
        ):  # so the tool node can say which remembered approval ran it (it checks the seal)
            record["remembered"] = entry
        return record

    def _judgements(
        self,
        calls: list[ToolCall],
        owners: Mapping[str, Owner],
        config: RunnableConfig,
        declined: Mapping[str, str],
    ) -> _Judgements:
        principal = self.policy.principal_for(config)
        verdicts = {
            call.get("id") or "": owner_verdict(self.policy, call, owners[call["name"]], principal=principal)
            for call in calls
            if (call.get("id") or "") not in declined
        }
        return _Judgements(self, calls, owners, config, principal, verdicts, current_store())

    def _verdicts(
        self, j: _Judgements, recalls: Mapping[str, Recall], declined: Mapping[str, str]
    ) -> dict[str, Any]:
        config = j.config
        can_pause = has_checkpointer(config.get("configurable", {}))
        principal = j.principal
        reviews: list[ApprovalInterrupt] = []
        denied: dict[str, str] = dict(declined or {})
        allowed: dict[str, GateRecord] = {}
        judged: dict[str, dict[str, Any]] = {}
        shown: dict[str, ToolDefinition] = {}
        remembered: dict[str, Decision] = {}
        for call in j.calls:
            call_id = call.get("id") or ""
            if call_id in denied:
                continue
            owner = j.owners[call["name"]]
            verdict = j.verdicts[call_id]
            tool = owner.tool
            judged[call_id] = {
                "verdict": verdict.kind,
                "rule": verdict.rule,
                "principal": principal,
                "server": tool.server if tool is not None else None,
                "tool": tool.name if tool is not None else call["name"],
                "definition_hash": tool.definition_hash if tool is not None else None,
            }
            memory = recalls.get(call_id)
            decision = memory.decision if memory is not None else None
            if verdict.allowed:
                allowed[call_id] = self.allow_record(call, owner.tool, config)
            elif verdict.denied:
                denied[call_id] = verdict.reason
            elif decision is not None and tool is not None:  # an entry this package signed, this definition
                judged[call_id]["decided_by"] = "remembered"
                if decision["type"] == "approve":
                    entry = memory.entry if memory is not None else None
                    allowed[call_id] = self.remembered_record(call, tool, config, entry)
                else:
                    remembered[call_id] = decision
            elif not can_pause:  # fail closed: nobody can be asked
                denied[call_id] = (
                    f"it needs a human's approval ({verdict.reason}), but the graph has no checkpointer to "
                    "pause on: compile it with one, e.g. graph.compile(checkpointer=InMemorySaver())"
                )
            else:
                payload = ask_payload(
                    call, owner.tool, verdict, self.policy, shapes=self.shapes, config=config
                )
                with_offer(
                    payload,
                    verdict,
                    *offer(
                        verdict,
                        tool,
                        has_store=j.store is not None,
                        thread_id=j.thread_id,
                        principal=principal,
                        key=self.signer.key,
                    ),
                )
                mind_client_principal(payload)
                reviews.append(payload)
                if owner.tool is not None:
                    shown[call_id] = owner.tool.definition
        written: dict[str, Review] = {}
        for field, values in (
            ("judged", judged),  # first: every judged call, in call order (the order reviews are asked in)
            ("denied", denied),
            ("allowed", allowed),
            ("payload", {p["tool_call_id"]: p for p in reviews}),
            ("shown", shown),
            ("decision", remembered),
        ):
            for call_id, review in of_calls(field, values).items():
                written[call_id] = {**written.get(call_id, {}), **review}
        return {REVIEW: written}

    def check(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        calls = self.calls(state)
        owners = self.owners(calls)
        declined: dict[str, str] = {}
        for _ in range(len(calls) * MAX_SIGN_INS_PER_CALL):
            if not self._sign_in_first(calls, owners, declined):
                break
            owners = self.owners(calls)
        j = self._judgements(calls, owners, config, declined)
        messages = messages_of(state, self.messages_key)
        recalls = {cid: recall(j.store, messages, **kw) for cid, kw in j.lookups()}
        return self._verdicts(j, recalls, declined)

    async def acheck(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        calls = self.calls(state)
        owners = await self.aowners(calls)
        declined: dict[str, str] = {}
        for _ in range(len(calls) * MAX_SIGN_INS_PER_CALL):
            if not self._sign_in_first(calls, owners, declined):
                break
            owners = await self.aowners(calls)
        j = self._judgements(calls, owners, config, declined)
        messages = messages_of(state, self.messages_key)
        recalls = {cid: await arecall(j.store, messages, **kw) for cid, kw in j.lookups()}
        return self._verdicts(j, recalls, declined)

    def _sign_in_first(
        self, calls: list[ToolCall], owners: Mapping[str, Owner], declined: dict[str, str]
    ) -> bool:
        """A call whose server needs the principal to sign in before its tool can even be looked up: ask for the
        sign-in here, so the human then judges the real tool (not an unresolved name). ``True`` when a sign-in
        was handed over (look the owners up again); a declined one denies its call."""
        for call in calls:
            call_id = call.get("id") or ""
            needed = owners[call["name"]].sign_in
            if needed is None or call_id in declined:
                continue
            if not has_checkpointer(get_config().get("configurable", {})):
                return False  # nobody can be asked: the call stays unresolved (denied, as without a checkpointer)
            payload = authorization_payload(
                server=needed.server,
                authorization_url=needed.authorization_url,
                principal=needed.principal,
                scopes=needed.scopes,
                tool_call_id=call_id,
            )
            asked = self.shapes.sign_in(payload)
            result = sign_in_result(InterruptAsker(call_id, shapes=self.shapes).sign_in(asked))
            if result is None or result.error is not None:
                why = "was declined" if result is None else f"was refused ({result.error})"
                declined[call_id] = f"signing in to MCP server {needed.server!r} {why}"
                continue
            self._access.connections.identities.hand_over(needed.server, result)
            return True
        return False


@dataclass(frozen=True)
class _Judgements:
    """One ``check``'s verdicts, and what remembered decisions are looked up with."""

    gate: GateCheck
    calls: list[ToolCall]
    owners: Mapping[str, Owner]
    config: RunnableConfig
    principal: str | None
    verdicts: Mapping[str, Verdict]
    store: BaseStore | None

    @property
    def thread_id(self) -> str:
        return str(self.config.get("configurable", {}).get("thread_id") or "")

    def lookups(self) -> list[tuple[str, dict[str, Any]]]:
        """``(tool call id, recall arguments)`` of every call an unlocked ``ask`` may be answered for from memory."""
        out = []
        for call in self.calls:
            call_id = call.get("id") or ""
            verdict = self.verdicts.get(call_id)
            tool = self.owners[call["name"]].tool
            if verdict is None or not verdict.needs_approval or tool is None:
                continue
            out.append(
                (
                    call_id,
                    {
                        "key": self.gate.signer.key,
                        "verdict": verdict,
                        "tool": tool,
                        "identity": self.gate.signer.server_identity(tool.server),
                        "thread_id": self.thread_id,
                        "principal": self.principal,
                        "arguments": call.get("args"),
                    },
                )
            )
        return out
