"""The package's shape: imports flow one way through the layers, the public API is the documented one, and only
``_compat.py`` touches the private parts of a dependency.

Layers
======

Folders are the layers. Bottom first; a module may import modules of its own layer or of a layer below it, never
above; and no import cycle anywhere, not even inside one layer. ``ARCHITECTURE.md`` at the repository root
explains each folder and traces one call and one pause through them.

0. **vocabulary** — the top-level modules: ``errors`` (the one error vocabulary), ``payloads`` (the JSON-shaped
   interrupt payloads and answers UIs depend on), ``credentials`` (per-run header values, the principal),
   ``catalog`` (tool descriptors, naming, definition hashes), ``_compat`` (the one guarded door to dependencies'
   internals). Everyone may read them.
1. **transports** — ``transports/``: one module per transport (its config model, how it opens a client, what a
   decision about its server binds to), and ``config`` (every server by name, over the registered transports).
2. **policy** — ``policy/``: the policy language, with no I/O: the policy model, precedence, rules and their
   conditions, policy files and their self-tests, verdicts, and what a signed decision binds to.
3. **questions** — ``questions/``: what a person is asked and may answer, with no I/O: one module per interrupt kind
   (approval and its decisions, elicitation and its answers, sign-in, sampling), the registry over them (resume),
   the Agent Chat UI shapes and cards, URL and secret inspection, coercion, schemas.
4. **connection** — ``connection/``: one live server (owner task, the watch on its transport, requests, timers,
   legacy routing of pushed questions, server logs).
5. **calls** — ``calls/``: one call over a connection (round driver, asker, paused calls, interceptors, progress
   stream, results, LangChain tools). They are handed what they need, so they never import ``servers``.
6. **servers** — ``servers/``: many servers, one lifecycle (``McpServers``, per-identity connections, listings,
   name resolution, the sync bridge, status, resources and prompts).
7. **approval** — ``approval/``: the one judgement of a call (allow, deny, ask, remembered; what an answer does),
   who owns a call, remembered decisions, the decision record.
8. **graph** — ``graph/``: what users wire into a StateGraph (``McpToolNode``, routers, the gate, messages).
9. **examples** — ``examples/`` (demo server, demo/Studio graph, scripted model).
10. **cli** — ``cli/``.
11. **facade** — ``langgraph_mcp`` itself (the lazy public exports) and ``__main__``; nothing in the package
   imports the facade (import from the defining module).

Every module matches exactly one entry of :data:`LAYERS` (a new top-level module must be added to the vocabulary
list on purpose; anything else goes in the folder whose job it does).

What counts as an import: every ``import``/``from … import`` in a module, at any depth — inside functions
(a function-level import still ties the modules together, and is the usual way to hide a cycle) and under
``if TYPE_CHECKING:`` (a type-only import is still a dependency: renaming or moving the imported name breaks
the importer, and it is the other usual way to hide a cycle; break a real cycle with a ``Protocol`` instead).
The facade's ``TYPE_CHECKING`` block is the exception only in that the facade is the top layer anyway.

Known cycles and known private accesses that their owners are removing are listed below; each list only
shrinks: the test fails when an entry is no longer true, so remove it then.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import langgraph_mcp

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = ROOT / "langgraph_mcp"
PACKAGE = "langgraph_mcp"

LAYERS: list[tuple[str, list[str]]] = [
    ("vocabulary", ["errors", "payloads.*", "credentials", "catalog", "_compat"]),
    ("transports", ["transports.*", "config"]),
    ("policy", ["policy.*"]),
    ("questions", ["questions.*"]),
    ("connection", ["connection.*"]),
    ("calls", ["calls.*"]),
    ("servers", ["servers.*"]),
    ("approval", ["approval.*"]),
    ("graph", ["graph.*"]),
    ("examples", ["examples.*"]),
    ("cli", ["cli.*"]),
    ("facade", ["", "__main__"]),
]
"""Bottom first. Names are relative to ``langgraph_mcp`` (``""`` is the package itself); ``x.*`` matches every
module of subpackage ``x`` (and ``x`` itself) not named exactly elsewhere."""

KNOWN_CYCLES: dict[frozenset[str], str] = {}
"""Import cycles that exist today and are being removed (issue 11 §3). Remove an entry when its cycle is gone."""

KNOWN_UPWARD_IMPORTS: dict[tuple[str, str], str] = {}
"""``(importer, imported)`` arrows against :data:`LAYERS` that exist today and are being removed."""

KNOWN_PRIVATE_ACCESS: dict[tuple[str, str], str] = {}
"""``(module path under langgraph_mcp/, finding)`` pairs outside ``_compat.py`` being moved into it (issue 11 §1)."""

DOCUMENTED_UNDERSCORE_APIS = {"os._exit", "sys._getframe", "_replace", "_asdict", "_fields", "_make"}
"""Underscore names that are public, documented API (``os._exit``; the namedtuple methods)."""


# ------------------------------------------------------------------------------------------- the import graph


@dataclass(frozen=True)
class Module:
    name: str
    """Relative to the package: ``"servers"``, ``"cli.demo"``; ``""`` for ``langgraph_mcp/__init__.py``."""
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def rel(self) -> str:
        return self.path.relative_to(PACKAGE_DIR).as_posix()


def package_modules() -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = Module(".".join(parts), path)
    return modules


MODULES = package_modules()
TREES = {name: ast.parse(module.path.read_text(encoding="utf-8")) for name, module in MODULES.items()}


def _relative(absolute: str) -> str | None:
    """``langgraph_mcp.x.y`` → ``x.y`` (``""`` for the package); None for another package."""
    if absolute == PACKAGE:
        return ""
    if absolute.startswith(PACKAGE + "."):
        return absolute[len(PACKAGE) + 1 :]
    return None


def _owning_module(name: str) -> str:
    """The nearest existing module for a dotted name (``x.y.Name`` → ``x.y``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imported_modules(module: Module, tree: ast.Module) -> Iterator[str]:
    """The package modules ``tree`` imports anywhere, at any depth (``from x import Name`` imports ``x``;
    ``from x import sub`` imports the submodule ``x.sub``)."""
    own = f"{PACKAGE}.{module.name}" if module.name else PACKAGE
    package = own if module.is_package else own.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                relative = _relative(alias.name)
                if relative is not None:
                    yield _owning_module(relative)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            relative = _relative(source)
            if relative is None:
                continue
            for alias in node.names:
                submodule = f"{relative}.{alias.name}" if relative else alias.name
                yield submodule if submodule in MODULES else _owning_module(relative)


def import_graph() -> dict[str, set[str]]:
    """``importer → {imported}`` between the package's modules."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, module in MODULES.items():
        graph[name].update(target for target in imported_modules(module, TREES[name]) if target != name)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Tarjan's strongly connected components with more than one module (the import cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _pinned_layer(name: str) -> int | None:
    for level, (_, patterns) in enumerate(LAYERS):
        if name in patterns:
            return level
    best: tuple[int, int] | None = None  # (prefix length, level): the longest matching `x.*` wins
    for level, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            if pattern.endswith(".*"):
                prefix = pattern[:-2]
                if (name == prefix or name.startswith(prefix + ".")) and (
                    best is None or len(prefix) > best[0]
                ):
                    best = (len(prefix), level)
    return None if best is None else best[1]


def layers(graph: dict[str, set[str]]) -> tuple[dict[str, int], set[str]]:
    """Each module's layer: pinned by :data:`LAYERS`, else the lowest its imports allow. Also the unpinned ones."""
    level = {name: _pinned_layer(name) for name in graph}
    unpinned = {name for name, value in level.items() if value is None}
    inferred = {name: 0 for name in unpinned}
    for _ in range(len(unpinned) + 1):  # a fixpoint; cycles among new modules are reported separately
        for name in unpinned:
            targets = [level[t] if level[t] is not None else inferred[t] for t in graph[name]]
            inferred[name] = max([0, *[t for t in targets if t is not None]])
    return {name: value if value is not None else inferred[name] for name, value in level.items()}, unpinned


def _show(name: str) -> str:
    return f"{PACKAGE}.{name}" if name else PACKAGE


# ------------------------------------------------------------------------------------------- import tests


def test_import_graph_is_read_at_every_depth() -> None:
    """The reader sees function-level and TYPE_CHECKING imports, relative and absolute, of modules and names."""
    tree = ast.parse(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import langgraph_mcp.config\n"
        "from langgraph_mcp import errors\n"
        "from ..catalog import McpTool\n"
        "if TYPE_CHECKING:\n"
        "    from langgraph_mcp.servers.mcp_servers import McpServers\n"
        "def f():\n"
        "    from langgraph_mcp.calls.driver import run_call\n"
        "    import langgraph_mcp.cli.demo as demo\n"
    )
    module = Module("graph.node", PACKAGE_DIR / "graph" / "node.py")
    seen = set(imported_modules(module, tree))
    assert seen == {"config", "errors", "catalog", "servers.mcp_servers", "calls.driver", "cli.demo"}
    graph = import_graph()
    assert "servers.mcp_servers" in graph["graph.node"] and "errors" in graph["catalog"]
    assert all(target in MODULES for targets in graph.values() for target in targets)


def test_no_import_cycles_beyond_the_known_ones() -> None:
    graph = import_graph()
    cycles = strongly_connected(graph)
    new = [sorted(_show(m) for m in c) for c in cycles if c not in KNOWN_CYCLES]
    assert not new, (
        f"import cycles: {new}. Break them by moving the shared code down a layer or typing on a Protocol; "
        "a function-level or TYPE_CHECKING import does not break a cycle."
    )
    gone = [sorted(c) for c in KNOWN_CYCLES if c not in cycles]
    assert not gone, f"these known cycles are gone (good): remove them from KNOWN_CYCLES: {gone}"


def test_imports_flow_down_the_layers() -> None:
    graph = import_graph()
    level, unpinned = layers(graph)
    names = [name for name, _ in LAYERS]
    upward = {
        (src, dst): f"{_show(src)} ({names[level[src]]}) imports {_show(dst)} ({names[level[dst]]})"
        + (" [layer inferred: name it in LAYERS]" if src in unpinned or dst in unpinned else "")
        for src, targets in graph.items()
        for dst in targets
        if level[src] < level[dst]
    }
    new = sorted(text for arrow, text in upward.items() if arrow not in KNOWN_UPWARD_IMPORTS)
    assert not new, "imports against the layer order (see this module's docstring):\n" + "\n".join(new)
    gone = sorted(arrow for arrow in KNOWN_UPWARD_IMPORTS if arrow not in upward)
    assert not gone, f"these known upward imports are gone: remove them from KNOWN_UPWARD_IMPORTS: {gone}"


def test_layer_table_names_real_modules() -> None:
    """Every exact name in LAYERS exists (a renamed module must be renamed here too) and none is listed twice."""
    exact = [p for _, patterns in LAYERS for p in patterns if not p.endswith(".*")]
    missing = sorted(p for p in exact if p not in MODULES and p != "_compat")
    assert not missing, f"LAYERS names modules that do not exist: {missing}"
    assert len(exact) == len(set(exact))
    for pattern in (p[:-2] for _, patterns in LAYERS for p in patterns if p.endswith(".*")):
        assert pattern in MODULES, f"LAYERS names a subpackage that does not exist: {pattern}"


def _matching_entries(name: str) -> list[str]:
    return [
        pattern
        for _, patterns in LAYERS
        for pattern in patterns
        if pattern == name
        or (pattern.endswith(".*") and (name == pattern[:-2] or name.startswith(pattern[:-2] + ".")))
    ]


def test_every_module_is_in_exactly_one_layer() -> None:
    """Folders are the layers: every module matches one entry of LAYERS, and only one."""
    unmatched = sorted(_show(name) for name in MODULES if not _matching_entries(name))
    assert not unmatched, (
        f"modules in no layer: {unmatched}. Put a new module in the folder whose job it does "
        "(transports/, policy/, questions/, connection/, calls/, servers/, graph/); a new top-level module is a vocabulary module "
        "and must be named in LAYERS on purpose."
    )
    doubled = {_show(name): found for name in MODULES if len(found := _matching_entries(name)) > 1}
    assert not doubled, f"modules matched by more than one LAYERS entry: {doubled}"


def test_layer_check_catches_a_cycle_and_an_upward_import() -> None:
    """The checks can fail: a made-up graph with a cycle and an upward arrow is caught."""
    graph = {"errors": {"servers"}, "servers": {"errors"}, "node": set()}
    assert strongly_connected(graph) == [frozenset({"errors", "servers"})]
    level, _ = layers({"errors": {"graph.node"}, "graph.node": set()})
    assert level["errors"] < level["graph.node"]
    level, unpinned = layers(
        {"brand_new": {"servers.names"}, "servers.names": set(), "graph.node": {"brand_new"}}
    )
    assert unpinned == {"brand_new"} and level["brand_new"] == level["servers.names"]
    assert not _matching_entries("brand_new") and _matching_entries("graph.node") == ["graph.*"]


# ------------------------------------------------------------------------------------------- the public API


def _docstring_names() -> list[str]:
    doc = langgraph_mcp.__doc__ or ""
    listed = doc.split("The public API", 1)
    assert len(listed) == 2, "langgraph_mcp's docstring must list the public API after 'The public API'"
    return [n for n in re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", listed[1]) if not n.startswith("__")]


def _readme_imports() -> set[str]:
    """Names the README imports from ``langgraph_mcp`` itself in its Python examples."""
    names: set[str] = set()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"```python[^\n]*\n(.*?)```", readme, flags=re.S):
        for line in re.findall(r"^from langgraph_mcp import \(?([^)]*?)\)?$", block, flags=re.M | re.S):
            names.update(n.strip() for n in line.replace("\n", ",").split(",") if n.strip())
    return names


def test_all_is_the_documented_public_api() -> None:
    documented = _docstring_names()
    assert len(documented) == len(set(documented)), "a name is listed twice in langgraph_mcp's docstring"
    exported = list(langgraph_mcp.__all__)
    assert len(exported) == len(set(exported))
    assert set(exported) == set(documented), (
        f"in __all__ but not documented in langgraph_mcp/__init__.py's docstring: "
        f"{sorted(set(exported) - set(documented))}; documented but not in __all__: "
        f"{sorted(set(documented) - set(exported))}"
    )
    exports = langgraph_mcp._EXPORTS
    assert set(exports) == set(exported), "the lazy exports (_EXPORTS) and __all__ differ"
    readme = _readme_imports()
    assert readme, "the README imports nothing from langgraph_mcp (the parser is broken?)"
    assert readme <= set(exported), f"the README imports non-public names: {sorted(readme - set(exported))}"


def test_type_checkers_see_every_public_name() -> None:
    """The TYPE_CHECKING imports are __all__."""
    tree = TREES[""]
    typed = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for stmt in node.body
        if isinstance(stmt, ast.ImportFrom)
        for alias in stmt.names
    }
    assert typed == set(langgraph_mcp.__all__)


@pytest.mark.parametrize("name", sorted(langgraph_mcp.__all__))
def test_every_public_name_imports(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from langgraph_mcp import {name}", namespace)
    defining = importlib.import_module(langgraph_mcp._EXPORTS[name])
    assert namespace[name] is getattr(defining, name)
    assert not name.startswith("_")


# ------------------------------------------------------------------------------------------- private internals


def _defined_names() -> set[str]:
    """Every name the package defines itself (so ``x._name`` of one of these is not a dependency's private)."""
    names: set[str] = set()
    for tree in TREES.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    return names


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_findings(tree: ast.Module, own_names: set[str]) -> set[str]:
    """What in ``tree`` names a private module or attribute of another package."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith(PACKAGE) and any(map(_private, alias.name.split("."))):
                    found.add(f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.startswith(PACKAGE) or node.module == "__future__":
                continue
            if any(map(_private, node.module.split("."))):
                found.add(f"imports {node.module}")
            for alias in node.names:
                if _private(alias.name):
                    found.add(f"imports {node.module}.{alias.name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 2:
            name = node.args[1]
            if (
                node.func.id in {"getattr", "hasattr", "setattr", "delattr"}
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
                and _private(name.value)
                and not (isinstance(node.args[0], ast.Name) and node.args[0].id in {"self", "cls"})
            ):
                found.add(f"reads private attribute {name.value!r} by name")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own_names:
            text = ast.unparse(node)
            if text not in DOCUMENTED_UNDERSCORE_APIS and node.attr not in DOCUMENTED_UNDERSCORE_APIS:
                found.add(f"uses private attribute {text}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("__pregel_")
        ):
            found.add(f"names langgraph's private config key {node.value!r}")
    return found


def test_private_finder_catches_each_kind() -> None:
    tree = ast.parse(
        "import mcp.shared._httpx_utils as h\n"
        "from langgraph._internal._runnable import RunnableCallable\n"
        "from mcp.client import _transport\n"
        "x = getattr(session, '_dispatcher', None)\n"
        "y = session._write_stream\n"
        "z = config['configurable']['__pregel_scratchpad']\n"
        "os._exit(1)\n"
        "self._mine = getattr(self, '_mine')\n"
        "w = getattr(getattr(s, '_mine', None), '_closed')\n"
    )
    assert private_findings(tree, {"_mine"}) == {
        "imports mcp.shared._httpx_utils",
        "imports langgraph._internal._runnable",
        "imports mcp.client._transport",
        "reads private attribute '_dispatcher' by name",
        "reads private attribute '_mine' by name",
        "reads private attribute '_closed' by name",
        "uses private attribute session._write_stream",
        "names langgraph's private config key '__pregel_scratchpad'",
    }


def test_only_compat_touches_dependency_internals() -> None:
    own_names = _defined_names()
    found = {
        (module.rel, finding)
        for name, module in MODULES.items()
        if module.rel != "_compat.py"
        for finding in private_findings(TREES[name], own_names)
    }
    new = sorted(f"langgraph_mcp/{rel}: {finding}" for rel, finding in found - set(KNOWN_PRIVATE_ACCESS))
    assert not new, (
        "private internals of a dependency outside langgraph_mcp/_compat.py (move the access there, guarded, "
        "or use a public API):\n" + "\n".join(new)
    )
    gone = sorted(f"{rel}: {finding}" for rel, finding in set(KNOWN_PRIVATE_ACCESS) - found)
    assert not gone, "these are gone (good): remove them from KNOWN_PRIVATE_ACCESS:\n" + "\n".join(gone)
