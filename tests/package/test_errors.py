"""One error vocabulary (issue 11 §4): every exception is defined in ``errors.py``, drawn in its docstring's tree,
exported, and carries structured fields; no code parses error text; built-in errors don't escape public calls.

The checks read the package's source with ``ast``; each allow-list entry says why the exception is fine.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import langgraph_mcp
from langgraph_mcp import errors
from langgraph_mcp.errors import AnswerError, ServerError
from langgraph_mcp.questions.answers import validate_answers

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "langgraph_mcp"

PRIVATE_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("cli/app.py", "_StdoutClosed"): (
        "control flow of the CLI: raised by its console when stdout is closed (`| head`), caught by run() (the CLI's one entry), which "
        "exits 141 quietly; a BaseException so no command's `except Exception` swallows it on the way"
    ),
    ("questions/decisions.py", "_TooBig"): (
        "control flow inside _args_schema: raised and caught by that one function (checked below), it ends a "
        "$ref-inlining walk that grew past its budget and never escapes"
    ),
    ("connection/oauth.py", "RefreshFirst"): (
        "control flow of one connection: raised out of the SDK's OAuth flow on a 401 with a refresh token at hand, "
        "caught by the connection's start (which starts again) and its failure reader (CallNotSentError); never "
        "reaches a caller"
    ),
    ("calls/tools.py", "McpToolError"): (
        "must subclass langchain_core's ToolException so a LangChain ToolNode reports it as a ToolMessage; "
        "errors.py stays free of LangChain so `python -m langgraph_mcp.examples.demo_server` starts without it"
    ),
}
"""Exception classes defined outside ``errors.py``: (module, class) -> why that is fine."""

BUILTIN_RAISES: dict[tuple[str, str], str] = {
    ("policy/rules.py", "_no_clock"): (
        "an internal invariant, not a user's mistake: a condition matched once per tool never reads the clock, so "
        "reaching this is a bug in the package (CompiledRule sorts conditions by what they read)"
    ),
    ("questions/sampling.py", "SamplingDecisionModel._fits_its_type"): (
        "a pydantic validator of a sampling decision: pydantic turns the ValueError into the ValidationError "
        "LangGraph refuses the resume with (the same interrupt stays pending)"
    ),
    ("questions/sampling.py", "_HitlSamplingDecision._fits_its_type"): (
        "a pydantic validator of a sampling decision (Agent Chat UI shape), as above"
    ),
    ("questions/sampling.py", "CompletionDecisionModel._fits_its_type"): (
        "a pydantic validator of a completion review's decision: pydantic turns the ValueError into the "
        "ValidationError LangGraph refuses the resume with (the same interrupt stays pending)"
    ),
    ("questions/sampling.py", "_HitlCompletionDecision._fits_its_type"): (
        "a pydantic validator of a completion review's decision (Agent Chat UI shape), as above"
    ),
    ("approval/memory.py", "list_approvals"): (
        "a Python API called with an owner but no scope: a programming error in the caller, like a TypeError"
    ),
    ("transports/http.py", "HttpServer._one_way_to_authenticate"): (
        "a pydantic validator: pydantic turns the ValueError into a ValidationError, reported as ConfigError"
    ),
    ("config.py", "McpServersConfig._check_names"): (
        "a pydantic validator: pydantic turns the ValueError into a ValidationError, reported as ConfigError"
    ),
    ("credentials.py", "expand_env.replace"): (
        "expand_env is only called from the HTTP transports' pydantic header validators (ValidationError -> ConfigError)"
    ),
    ("questions/elicitation.py", "request_from_params"): (
        "exhaustiveness guard over the SDK's ElicitRequest*Params union: only a programming error reaches it"
    ),
    ("connection/timers.py", "CancelAfter.__aexit__"): (
        "asyncio.timeout's own contract (TimeoutError): its one user, ServerConnection.call, catches it at once and "
        "raises ToolCallTimeoutError"
    ),
    ("examples/demo_server.py", "Registration._check_email"): (
        "the demo server's pydantic model validator (server side: becomes a validation error result)"
    ),
    ("examples/demo_tools.py", "add_sharing_tools.workspace_file"): (
        "the demo server's resource handler (server side: FastMCP sends it as an MCP error, never raised here)"
    ),
}
"""``raise RuntimeError/ValueError/TypeError`` sites: (module, enclosing function) -> why that is fine."""

BUILTIN_NAMES = {"RuntimeError", "ValueError", "TypeError", "TimeoutError"}
EXCEPTION_NAMES = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
} | {name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, Exception)}
EXCEPTION_NAMES |= {"ToolException"}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        yield path.relative_to(PACKAGE_DIR).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def _walk(node: ast.AST, scope: tuple[str, ...] = ()) -> Iterator[tuple[ast.AST, tuple[str, ...]]]:
    """Every node with the names of the classes and functions around it."""
    for child in ast.iter_child_nodes(node):
        yield child, scope
        inner = (
            (*scope, child.name)
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            else scope
        )
        yield from _walk(child, inner)


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_exception_class(node: ast.ClassDef) -> bool:
    return any(
        (name := _name(base)) is not None
        and (name in EXCEPTION_NAMES or name.endswith(("Error", "Exception")))
        for base in node.bases
    )


def test_every_exception_class_is_defined_in_errors() -> None:
    found: set[tuple[str, str]] = set()
    for module, tree in _modules():
        if module == "errors.py":
            continue
        found |= {
            (module, n.name) for n, _ in _walk(tree) if isinstance(n, ast.ClassDef) and _is_exception_class(n)
        }
    outside = found - set(PRIVATE_EXCEPTIONS)
    assert not outside, f"exception classes defined outside langgraph_mcp/errors.py: {sorted(outside)}"
    stale = set(PRIVATE_EXCEPTIONS) - found
    assert not stale, f"allow-list entries that no longer exist (remove them): {sorted(stale)}"


CAUGHT_AT_THE_TOP = {("cli/app.py", "_StdoutClosed"): "run"}
"""Private control-flow exceptions raised anywhere in their module and caught by its one entry point."""


def _caught_names(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Tuple):
        return {_name(element) for element in node.elts}
    return {_name(node)}


def test_private_control_flow_exceptions_never_leave_their_function() -> None:
    for module, name in PRIVATE_EXCEPTIONS:
        if not name.startswith("_"):
            continue
        tree = ast.parse((PACKAGE_DIR / module).read_text(encoding="utf-8"))
        catchers = [
            fn
            for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            and any(
                isinstance(h, ast.ExceptHandler) and h.type is not None and name in _caught_names(h.type)
                for h in ast.walk(fn)
            )
        ]
        assert len(catchers) == 1, f"{module}: {name} must be caught by exactly one function"
        if (module, name) in CAUGHT_AT_THE_TOP:
            assert catchers[0].name == CAUGHT_AT_THE_TOP[(module, name)]
            continue
        inside = {id(r) for r in ast.walk(catchers[0]) if isinstance(r, ast.Raise)}
        raises = [
            r
            for r in ast.walk(tree)
            if isinstance(r, ast.Raise) and r.exc is not None and _name(r.exc) == name
        ]
        assert raises and all(id(r) in inside for r in raises), (
            f"{module}: {name} is raised outside {catchers[0].name}, which catches it: it could escape"
        )


def test_public_exceptions_outside_errors_are_package_errors_named_in_its_docstring() -> None:
    for module, name in PRIVATE_EXCEPTIONS:
        if name.startswith("_"):
            continue
        dotted = "langgraph_mcp." + module.removesuffix(".py").replace("/", ".")
        cls = getattr(importlib.import_module(dotted), name)
        assert issubclass(cls, errors.LangGraphMcpError), f"{dotted}.{name} is not a LangGraphMcpError"
        assert f"``{dotted}.{name}``" in (errors.__doc__ or ""), f"errors.py's docstring does not name {name}"


def _tree() -> dict[str, tuple[str | None, set[str]]]:
    """The docstring's tree: class -> (parent in the tree, the built-in bases shown in parentheses)."""
    doc = errors.__doc__ or ""
    out: dict[str, tuple[str | None, set[str]]] = {}
    stack: list[str] = []
    for line in doc.splitlines():
        match = re.match(
            r"^\s*(?P<branch>(?:[│ ]   )*[├└]── )?(?P<name>[A-Z]\w+)(?: \((?P<builtin>[\w, ]+)\))?", line
        )
        if match is None or not (match["branch"] or match["name"] == "LangGraphMcpError"):
            continue
        depth = len(match["branch"]) // 4 if match["branch"] else 0
        del stack[depth:]
        builtin = {b.strip() for b in (match["builtin"] or "").split(",") if b.strip()}
        out[match["name"]] = (stack[-1] if stack else None, builtin)
        stack.append(match["name"])
    return out


def _error_classes() -> dict[str, type[BaseException]]:
    tree = ast.parse((PACKAGE_DIR / "errors.py").read_text(encoding="utf-8"))
    names = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    classes = {name: getattr(errors, name) for name in names}
    return {name: cls for name, cls in classes.items() if issubclass(cls, BaseException)}


def test_errors_docstring_tree_draws_every_class_with_its_bases() -> None:
    classes = _error_classes()
    tree = _tree()
    assert set(tree) == set(classes), (
        f"in errors.py but not in its docstring tree: {sorted(set(classes) - set(tree))}; "
        f"in the tree but not defined: {sorted(set(tree) - set(classes))}"
    )
    for name, cls in classes.items():
        parent, shown = tree[name]
        ours = [b.__name__ for b in cls.__bases__ if b.__module__ == errors.__name__]
        theirs = {b.__name__ for b in cls.__bases__ if b.__module__ != errors.__name__} - {"Exception"}
        assert ours[:1] == ([parent] if parent else []), (
            f"{name}: the tree puts it under {parent}, not {ours}"
        )
        assert shown == theirs, f"{name}: the tree shows built-in bases {shown}, the class has {theirs}"


@pytest.mark.parametrize("name", sorted(_error_classes()))
def test_every_error_imports_from_the_package(name: str) -> None:
    """Every error imports from ``langgraph_mcp.errors``; the ones users catch are exported from ``langgraph_mcp``
    (and documented there)."""
    if name in langgraph_mcp.__all__:
        assert getattr(langgraph_mcp, name) is getattr(errors, name)
    if name in langgraph_mcp.__all__:
        assert f"``{name}``" in (langgraph_mcp.__doc__ or ""), f"{name} is not in langgraph_mcp's docstring"
    assert issubclass(getattr(errors, name), errors.LangGraphMcpError)


def test_no_builtin_errors_raised_outside_the_allow_list() -> None:
    found: dict[tuple[str, str], int] = {}
    for module, tree in _modules():
        for node, scope in _walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None and _name(node.exc) in BUILTIN_NAMES:
                found[(module, ".".join(scope))] = node.lineno
    unexplained = {f"{m}:{line} ({fn})" for (m, fn), line in found.items() if (m, fn) not in BUILTIN_RAISES}
    assert not unexplained, (
        f"built-in RuntimeError/ValueError/TypeError/TimeoutError raised (raise a langgraph_mcp.errors class): {sorted(unexplained)}"
    )
    stale = set(BUILTIN_RAISES) - set(found)
    assert not stale, f"allow-list entries that no longer raise (remove them): {sorted(stale)}"


def test_no_code_parses_error_text() -> None:
    found = []
    for module, tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"split", "rsplit", "partition", "rpartition"}
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and ": " in node.args[0].value
            ):
                found.append(f"{module}:{node.lineno}")
    assert not found, f"text split on ': ' (read the error's server/tool/detail fields instead): {found}"


def test_checks_catch_what_they_look_for() -> None:
    """The finders above are not vacuous: each reports a planted instance."""
    planted = ast.parse(
        "class Oops(ValueError):\n    pass\n"
        "def f(exc):\n    raise TypeError('x')\n"
        "def g(exc):\n    return str(exc).split(': ', 1)\n"
    )
    classes = [n for n, _ in _walk(planted) if isinstance(n, ast.ClassDef) and _is_exception_class(n)]
    raises = [(n, s) for n, s in _walk(planted) if isinstance(n, ast.Raise) and _name(n.exc) in BUILTIN_NAMES]  # type: ignore[arg-type]
    splits = [n for n in ast.walk(planted) if isinstance(n, ast.Call) and _name(n) == "split"]
    assert [c.name for c in classes] == ["Oops"] and [s for _, s in raises] == [("f",)] and len(splits) == 1
    assert _tree()["ResumeTypeError"] == ("ResumeError", {"TypeError"})
    assert _tree()["CallNotSentError"] == ("ServerConnectionError", set())


_SAMPLE_ARGS: dict[str, Any] = {
    "server": "files",
    "tool": "read_file",
    "detail": "it broke",
    "retry_in": 1.5,
    "size": 10,
    "limit": 5,
    "timeout": 2.0,
    "what": "tools/list",
    "uri": "file:///a",
    "prompt": "greet",
    "principal": "alice",
    "authorization_url": "https://auth.example/authorize?state=s",
    "scopes": ["files:read"],
    "answers": {},
}


def _server_errors() -> list[type[ServerError]]:
    out: list[type[ServerError]] = []
    todo: list[type[ServerError]] = [ServerError]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted({c for c in out if c.__module__ == errors.__name__}, key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", _server_errors(), ids=lambda c: c.__name__)
def test_every_server_error_carries_server_tool_and_detail(cls: type[ServerError]) -> None:
    params = inspect.signature(cls).parameters
    args = {name: _SAMPLE_ARGS[name] for name, p in params.items() if p.default is inspect.Parameter.empty}
    if "tool" in params:
        args["tool"] = "read_file"
    exc = cls(**args)
    assert exc.server == "files"
    assert exc.tool == ("read_file" if "tool" in params else None)
    assert isinstance(exc.detail, str) and exc.detail and exc.detail in str(exc)
    assert "files" in str(exc)


def test_answer_error_detail_is_the_message_without_its_key() -> None:
    request = {
        "mode": "form",
        "message": "How many?",
        "requested_schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "sensitive": [],
    }
    with pytest.raises(AnswerError) as caught:
        validate_answers({"q": request}, {"q": {"action": "accept", "content": {"n": "many"}}})  # type: ignore[dict-item]
    assert caught.value.key == "q" and caught.value.field == "n"
    assert str(caught.value) == f"answer for 'q': {caught.value.detail}"
    assert caught.value.detail.startswith("field 'n'")
