"""The answer book: a task's stored LangGraph resume values, matched to the questions a tool call asks.

LangGraph re-runs an interrupted node from the top and hands each ``interrupt()`` call the stored answer with the
same index. A re-issued MCP call may not ask exactly what it asked before (a legacy server's question can change
between attempts), so answers are matched by the question's request keys — the server's own keys in the 2026-07-28
era, a hash of message and schema for legacy questions — and a stored answer that no longer fits is skipped rather
than fed to the wrong question. A stored answer whose keys match but whose content no longer fits (the server
changed the question since it was accepted) is not forced either: the new question is asked, with that answer as
``previous_answers`` context. The same holds for a new answer that fits the question as the human was shown it (read
back from the checkpoint on the durable path) but not the server's current one.

A fresh answer is always taken through ``interrupt(payload, response_schema=...)``, so LangGraph validates it
against the question before saving it: a bad answer is refused and the same interrupt can be answered again.

The asker asks in its graph's shapes (:class:`~langgraph_mcp.questions.agent_chat_ui.QuestionShapes`): in Agent Chat
UI mode the payload also carries its ``HITLRequest`` card and the answer may be a ``{"decisions": [...]}`` value;
stored values of that shape are mapped back to answers keyed by request key before they are matched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langgraph.config import get_config
from langgraph.errors import GraphInterrupt, is_invalid_resume
from langgraph.types import interrupt

from langgraph_mcp._compat import (
    fresh_resume_index,
    has_checkpointer,
    shown_interrupt_value,
    stored_resume_values,
    task_scratchpad,
)
from langgraph_mcp.calls.paused import PausedRound, PausedRounds, StillPending
from langgraph_mcp.errors import AnswerError, NoCheckpointerError
from langgraph_mcp.payloads import (
    AuthorizationInterrupt,
    ElicitationAnswers,
    ElicitationInterrupt,
    ElicitationRequest,
    SignInAnswer,
)
from langgraph_mcp.questions.agent_chat_ui import PLAIN, QuestionShapes
from langgraph_mcp.questions.answers import validate_answers
from langgraph_mcp.questions.sign_in import check_sign_in_answer, sign_in_response_schema


def _fits(requests: Mapping[str, ElicitationRequest], stored: Mapping[str, Any]) -> bool:
    try:
        validate_answers(requests, stored)
    except AnswerError:
        return False
    return True


def _answers_a_changed_question(
    shown: Mapping[str, ElicitationRequest] | None, requests: Mapping[str, ElicitationRequest], stored: Any
) -> bool:
    """The new answer fits the question ``shown``, not the one the server asks now: the server changed it."""
    if shown is None or not isinstance(stored, Mapping) or set(stored) != set(requests):
        return False
    return dict(shown) != dict(requests) and _fits(shown, stored) and not _fits(requests, stored)


def _without_sensitive(
    requests: Mapping[str, ElicitationRequest], stored: Mapping[str, Any]
) -> ElicitationAnswers:
    shown: dict[str, Any] = {}
    for key, answer in stored.items():
        request = requests.get(key)
        hidden = (
            set(request.get("sensitive", [])) if request is not None and request["mode"] == "form" else set()
        )
        content = answer.get("content") if isinstance(answer, Mapping) else None
        if isinstance(content, Mapping) and hidden:
            answer = {**answer, "content": {k: v for k, v in content.items() if k not in hidden}}
        shown[key] = answer
    return cast(ElicitationAnswers, shown)


def _answers_sign_in(payload: AuthorizationInterrupt, stored: object) -> bool:
    if not isinstance(stored, Mapping) or "callback_url" not in stored:
        return False  # a decline ends the call: it is never found stored before a later sign-in
    try:
        check_sign_in_answer(payload, stored)
    except AnswerError:
        return False
    return True


async def _shown_requests(configurable: Mapping[str, Any], index: int) -> Mapping[str, Any] | None:
    """The questions of the pending interrupt at ``index`` as the checkpoint keeps them: with no live round to remember
    them, an answer to a question the server has changed since is told from a wrong answer by them."""
    value = await shown_interrupt_value(configurable, index)
    requests = value.get("requests") if isinstance(value, Mapping) else None
    return requests if isinstance(requests, Mapping) else None


def _book(configurable: Mapping[str, Any], offset: int) -> tuple[Any, int | None, bool]:
    """The task's scratchpad, where its new answer sits (past ``offset``, else ``None``), and whether it can pause."""
    scratchpad = task_scratchpad(configurable)
    fresh = None if scratchpad is None else fresh_resume_index(scratchpad, configurable)
    return (
        scratchpad,
        fresh if fresh is not None and fresh >= offset else None,
        has_checkpointer(configurable),
    )


class InterruptAsker:
    """Gets answers for one tool call's questions from LangGraph interrupts (one instance per node run).

    It keeps the call's place in the answer book: each answer is looked for from where the previous one was
    found (``_position``), the call's first round from the start of the book (or, continuing a paused round, from
    that round's own answer: :meth:`paused_round`); a round that pauses is kept with the index it must resume
    from.

    Lazy by itself: making one costs nothing (a call that asks nothing, most calls, never reads the run's config or
    its answer book); both are read when the call first needs them (a question, a sign-in, a decision, a round paused
    on the connection to continue)."""

    def __init__(self, tool_call_id: str, *, shapes: QuestionShapes = PLAIN, offset: int = 0) -> None:
        """``offset``: how many interrupts of the task come before the call's questions (the tool node's own
        approval, see :mod:`langgraph_mcp.approval.judge`); their stored values are never read as answers.
        ``shapes``: the graph's question shapes (Agent Chat UI mode: a ``HITLRequest`` card, ``{"decisions":
        [...]}`` answers, a round's questions one at a time)."""
        self.shapes = shapes
        self.offset = offset
        self.tool_call_id = tool_call_id
        self._config: Mapping[str, Any] | None = None  # the run's configurable, read when first needed
        self._key: tuple[str, ...] | None = None
        self._read = False  # the task's answer book is looked at when first needed (:meth:`_look`), if ever
        self._scratchpad: Any = None
        self._fresh: int | None = None  # where this run's new answer sits: always checked
        self._shown: Mapping[str, Any] | None = None  # the questions the new answer answers, as shown
        self._durable = (
            True  # no live round continued (until :meth:`paused_round` finds one): the durable path
        )
        self.has_checkpointer = False
        self.consumed = offset
        """How many ``interrupt()`` calls this node run has made (LangGraph's per-task counter)."""
        self._position = 0  # where the next answer is looked for in the book (after the last one found)
        self._raised_at = 0  # the index of the interrupt most recently raised: where a paused round resumes

    @property
    def _configurable(self) -> Mapping[str, Any]:
        """The run's ``configurable`` (empty outside a graph: calls work, questions can't pause)."""
        if self._config is None:
            try:
                self._config = get_config().get("configurable", {})
            except RuntimeError:  # called outside a graph
                self._config = {}
        return self._config

    @property
    def key(self) -> tuple[str, ...]:
        """The call's place in the run: thread, checkpoint namespace, tool call id (where its paused rounds are kept)."""
        if self._key is None:
            configurable = self._configurable
            thread = (str(configurable.get("thread_id", "")), str(configurable.get("checkpoint_ns", "")))
            self._key = (*thread, self.tool_call_id)
        return self._key

    def _look(self) -> None:
        """Read the task's answer book once, when the call first needs it (a question, a sign-in, a decision)."""
        if not self._read:
            self._read = True
            self._scratchpad, self._fresh, self.has_checkpointer = _book(self._configurable, self.offset)

    def has_fresh_answer(self) -> bool:
        """Whether this run carries a new answer for the task (a resume)."""
        self._look()
        return self._fresh is not None

    def after_approval(self, index: int = 0) -> None:
        """The task's interrupt ``index`` was the tool node's own approval (:mod:`langgraph_mcp.approval.judge`),
        made before this call's questions: the answer book starts after it, and neither its answer nor an answer
        before it is ever read as one of theirs."""
        self._look()
        if self.consumed <= index and self.offset <= index:
            self.offset = self.consumed = index + 1
            if self._fresh is not None and self._fresh <= index:
                self._fresh = None

    def paused_round(self, rounds: PausedRounds) -> PausedRound | None:
        """The live round this run continues (taken from ``rounds``: answers are then looked for from that round's
        own), or ``None``: the call is sent from its beginning and its answers looked for from the start of the
        book (the durable path, which also reads the question the new answer was given for, at the first
        question: :meth:`answer`)."""
        self._position = 0
        live = rounds.take(self.key) if rounds.kept else None  # most calls: nothing paused on this connection
        self._durable = live is None
        if live is not None:
            self._position = live.resume_index
        return live

    async def _read_shown(self) -> None:
        if self._durable:
            self._durable = False
            self._look()
            if self._fresh is not None and self._shown is None:
                self._shown = await _shown_requests(self._configurable, self._fresh)

    def start_over(self) -> None:
        """The call is sent again from its beginning: its answers are looked for from the start of the book."""
        self._position = 0

    def _open_book(self, name: str, needs: str) -> list[Any]:
        """The answer book (the task's resume values, the node's approval blanked); raises when nothing can pause."""
        self._look()
        if not self.has_checkpointer:
            raise NoCheckpointerError(
                name,
                f"{needs}, but the graph has no checkpointer to pause on: compile it with one, e.g. "
                "graph.compile(checkpointer=InMemorySaver())",
            )
        book = [] if self._scratchpad is None else stored_resume_values(self._scratchpad)
        return [None] * min(self.offset, len(book)) + book[self.offset :]

    def _advance_to(self, index: int) -> None:
        # Stale answers are consumed without a schema: they were validated when saved, for another question.
        while self.consumed < index:
            interrupt(None)
            self.consumed += 1

    async def answer(
        self,
        payload: ElicitationInterrupt,
        requests: Mapping[str, ElicitationRequest],
        live: tuple[PausedRounds, PausedRound] | None = None,
    ) -> ElicitationAnswers:
        """Answers for ``requests``: the first stored answer from the call's place in the book on with the same
        keys, or a new interrupt (raises ``GraphInterrupt`` to pause). ``live``: the round as it is open now (a
        legacy call inside its question, a modern requestState) and where to keep it: when the graph pauses, or an
        answer is refused, it is kept there, stamped with the index it resumes from, so a same-process resume
        continues it (and a legacy server's tool body still runs once). In Agent Chat UI mode a round of several
        questions is asked one per interrupt (one card at a time); a pause resumes it from its first question."""
        try:
            await self._read_shown()
            if self.shapes.one_at_a_time and len(requests) > 1:
                return self._answer_one_by_one(payload, requests)
            return self._answer_round(payload, requests)
        except Exception as exc:
            if live is not None and (isinstance(exc, GraphInterrupt) or is_invalid_resume(exc)):
                rounds, paused = live
                paused.resume_index = self._raised_at
                if paused.legacy_call is not None and isinstance(exc, GraphInterrupt) and exc.args:
                    raised = exc.args[0]
                    if raised:  # what the thread waits on while the call is parked, to tell when it moved on
                        paused.still_pending = StillPending(self._configurable, str(raised[-1].id))
                    if rounds.open_legacy_calls() >= rounds.connection.legacy.parked_call_limit:
                        await rounds.release_moved_on()
                rounds.keep(self.key, paused)
            raise

    async def parked_question(self) -> str | None:
        """Where the question this run answers was held open, if a legacy call asked it while held open (parked)
        somewhere: the ``held_by`` token of the ``mcp_elicitation`` interrupt the new resume value answers (``""``
        when it has none, or can't be read back: fail closed). ``None``: no such question (no new answer, another
        kind of interrupt, or a URL step (``-32042``), which holds nothing open)."""
        self._look()
        if self._fresh is None:
            return None
        value = await shown_interrupt_value(self._configurable, self._fresh)
        if not isinstance(value, Mapping):
            return ""
        if value.get("type") != "mcp_elicitation":
            return None
        held_by = value.get("held_by")
        if isinstance(held_by, str):
            return held_by
        requests = value.get("requests")
        url_step = (
            isinstance(requests, Mapping)
            and requests
            and all(isinstance(r, Mapping) and r.get("mode") == "url" for r in requests.values())
        )
        return None if url_step else ""

    def _answer_one_by_one(
        self, payload: ElicitationInterrupt, requests: Mapping[str, ElicitationRequest]
    ) -> ElicitationAnswers:
        answers: dict[str, Any] = {}
        first: int | None = None
        for key, request in requests.items():
            one = {key: request}
            try:
                got = self._answer_round({**payload, "requests": one}, one)
            except BaseException:
                if first is not None:  # paused (or refused) past the round's first question
                    self._raised_at = first
                raise
            if first is None:
                first = self._position - 1
            answers.update(got)
        return cast(ElicitationAnswers, answers)

    def _answer_round(
        self, payload: ElicitationInterrupt, requests: Mapping[str, ElicitationRequest]
    ) -> ElicitationAnswers:
        name = payload["published_name"]
        book = self._open_book(name, f"MCP tool {name!r} asked for input")
        keys = set(requests)
        index = self._position
        previous: Mapping[str, Any] | None = None
        while index < len(book):
            stored = book[index]
            if index == self._fresh and index >= self.consumed:
                if _answers_a_changed_question(self._shown, requests, stored):
                    # It answered the question as shown, which the server has changed since: saved as given
                    # (it was checked against what it answered), never forced on the new question.
                    self._advance_to(index + 1)
                    previous = stored
                    index += 1
                    continue
                # A new answer is checked against the question (response_schema), whatever its shape: a
                # wrong one is refused before it is saved and the same interrupt id stays pending.
                return self._take(index, payload, requests, stored)
            stored = self.shapes.stored_answers(requests, stored, name=payload["published_name"])
            if isinstance(stored, Mapping) and set(stored) == keys:
                if _fits(requests, stored):
                    return self._take(index, payload, requests, stored)
                # An answer accepted earlier that no longer fits: the server changed its question since.
                # Never forced on the new question; shown as context when it is asked.
                previous = stored
            index += 1
        if previous is not None:
            payload = {**payload, "previous_answers": _without_sensitive(requests, previous)}
        return self._take(len(book), payload, requests, None)

    def sign_in(self, payload: AuthorizationInterrupt) -> SignInAnswer:
        """The answer to a sign-in: a stored answer to this very sign-in (its ``state``), or a new interrupt (raises
        ``GraphInterrupt`` to pause). Answers to other questions stored before it are stepped over, as for
        elicitations; the new answer of a resume is always checked against this sign-in before it is saved."""
        server = payload["server"]
        book = self._open_book(server, f"MCP server {server!r} needs {payload['principal']!r} to sign in")
        index = self.consumed
        while index < len(book):
            if (index == self._fresh and index >= self.consumed) or _answers_sign_in(payload, book[index]):
                break
            index += 1
        self._advance_to(index)
        self._raised_at = index
        validated = interrupt(payload, response_schema=sign_in_response_schema(payload))
        self.consumed = index + 1
        answer: SignInAnswer = validated.answer()
        return answer

    def decide(self, payload: Mapping[str, Any], model: type[Any], *, anew: bool = False) -> Any:
        """A decision (not an elicitation answer) for ``payload``: the first stored value from the call's place in
        the book on that ``model`` accepts, or a new interrupt (LangGraph checks the resume value against ``model``
        before saving it). Returns the validated model; raises ``GraphInterrupt`` to pause.

        ``anew``: ``payload`` was never shown (a sampling completion made just now), so no stored value may answer
        it: every stored value is stepped over and a new interrupt asks."""
        name = str(payload.get("published_name", ""))
        book = self._open_book(name, f"MCP tool {name!r} needs a human's decision")
        if anew:
            return self._new_decision(max(len(book), self._position), payload, model)
        index = self._position
        while index < len(book):
            stored = book[index]
            fresh = index == self._fresh and index >= self.consumed
            if not fresh:
                try:
                    checked = model.model_validate(stored)
                except Exception:
                    index += 1
                    continue
                if index >= self.consumed:
                    self._advance_to(index)
                    interrupt(dict(payload))  # consumes the stored value, already checked above
                    self.consumed = index + 1
                self._position = index + 1
                return checked
            return self._new_decision(index, payload, model)
        return self._new_decision(len(book), payload, model)

    def _new_decision(self, index: int, payload: Mapping[str, Any], model: type[Any]) -> Any:
        self._advance_to(index)
        self._raised_at = index
        value = interrupt(dict(payload), response_schema=model)
        self.consumed = self._position = index + 1
        return value if isinstance(value, model) else model.model_validate(value)

    def _take(
        self,
        index: int,
        payload: ElicitationInterrupt,
        requests: Mapping[str, ElicitationRequest],
        stored: Mapping[str, Any] | None,
    ) -> ElicitationAnswers:
        if index < self.consumed and stored is not None:
            self._position = index + 1
            return validate_answers(requests, stored)
        self._advance_to(index)
        self._raised_at = index
        if stored is not None and not self.shapes.cards:
            # The answer interrupt() is about to take is known: one that fits is taken without building the answers
            # model (a pydantic class per distinct question, ~1 ms and ~15 KiB; LangGraph adds a TypeAdapter). One
            # that doesn't goes through the model below, so LangGraph refuses it before saving it, as always.
            try:
                checked = validate_answers(requests, stored)
            except Exception:
                pass
            else:
                interrupt(payload)
                self.consumed = self._position = index + 1
                return checked
        payload, model = self.shapes.elicitation(payload, requests)
        validated = interrupt(payload, response_schema=model)
        self.consumed = self._position = index + 1
        answers: ElicitationAnswers = validated.answers()
        return answers


def answers_kept(asker: InterruptAsker) -> int:
    """How many values ``asker``'s call's answer book holds (this run's and every earlier run's, the node's own
    approval not counted): a task polled again after a resume counts its rounds on from there."""
    asker._look()
    book = [] if asker._scratchpad is None else stored_resume_values(asker._scratchpad)
    return max(0, len(book) - asker.offset)
