"""The README's Python examples run as a new user runs them: pasted into a file, run with the venv's Python.

Extraction rule (for everyone who adds a README section):

* Every fenced block opened with ```` ```python ```` (optionally followed by ``name=FILE``) is a **complete
  program**. It is written to ``example.py`` in an empty temporary directory and run as ``<venv python>
  example.py`` with the venv *not* activated (its ``bin`` directory removed from ``PATH``, no ``VIRTUAL_ENV``),
  so it must import everything it uses, start servers with ``sys.executable`` and end by running itself
  (``asyncio.run(main())``). It passes when it exits 0 within :data:`TIMEOUT` seconds. ``name=FILE`` names it
  (the file the README tells the reader to save it as), so fragments can say they go into it.
* A block opened with ```` ```python fragment ```` is a piece of a larger program (it may use names defined
  elsewhere, or ``await`` at top level). A fragment that says where it goes carries ``into=NAME`` (a named
  program, or another named fragment, ``name=NAME``, spliced into its own target first): it is **spliced** into
  that program (:func:`splice`) and the result must run like a program. Other fragments are only compiled, so a
  syntax error still fails.
* Other languages (```` ```bash ````, ```` ```json ````) are not touched here.

Splicing (:func:`splice`) works on statements, not lines. Each fragment statement has a *key*: the target of an
assignment (``policy``, ``out``), the callee and first argument of a call (``builder.add_node("tools"``), the
name of a ``def``; imports have none. Fragment statements are matched in order, each to the first program
statement with the same key after the previous match (any depth, e.g. inside ``main()``). The program's
statements from the first match to the last are replaced by the fragment's (re-indented), so what lies between
two matched statements is dropped; fragment imports go to the top of the program. A fragment that matches
nothing is an error: it does not say where it goes.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import HANG_GUARD

README = Path(__file__).resolve().parents[1] / "README.md"
TIMEOUT = HANG_GUARD
_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    line: int
    heading: str
    info: str
    code: str

    @property
    def label(self) -> str:
        return f"README.md:{self.line} ({self.heading})"


def readme_blocks(text: str) -> list[Block]:
    """Every fenced code block of ``text`` with its line number and the heading above it."""
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()]
        headings = re.findall(r"^#+ (.+)$", before, re.M)
        blocks.append(
            Block(
                line=before.count("\n") + 1,
                heading=headings[-1] if headings else "top",
                info=match.group("info").strip(),
                code=match.group("body"),
            )
        )
    return blocks


def attributes(info: str) -> dict[str, str]:
    """``{"name": ..., "into": ...}`` from a fence's info string (``python fragment name=a into=b``)."""
    return dict(word.split("=", 1) for word in info.split()[1:] if "=" in word)


def is_program(block: Block) -> bool:
    words = block.info.split()
    return words[:1] == ["python"] and all("=" in w for w in words[1:])


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
PROGRAMS = [b for b in BLOCKS if is_program(b)]
FRAGMENTS = [b for b in BLOCKS if b.info.split()[:2] == ["python", "fragment"]]
PLACED = [b for b in FRAGMENTS if "into" in attributes(b.info)]
NAMED = {attributes(b.info)["name"]: b for b in PROGRAMS + FRAGMENTS if "name" in attributes(b.info)}


# ------------------------------------------------------------------------------------------------ splicing


class SpliceError(AssertionError):
    pass


def _key(node: ast.stmt) -> str | None:
    """What a statement is matched by (see the module docstring); ``None`` for imports and the unkeyed."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return None
    if isinstance(node, ast.Assign):
        return "=" + " ".join(ast.unparse(t) for t in node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return "=" + ast.unparse(node.target)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return "def " + node.name
    if isinstance(node, ast.Expr):
        value = node.value.value if isinstance(node.value, ast.Await) else node.value
        if isinstance(value, ast.Call):
            first = ast.unparse(value.args[0]) if value.args else ""
            return f"{ast.unparse(value.func)}({first}"
    return None


def _statements(tree: ast.AST) -> list[tuple[ast.stmt, list[ast.stmt]]]:
    """Every statement of ``tree`` with the body it belongs to, in source order."""
    found: list[tuple[ast.stmt, list[ast.stmt]]] = []

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            found.append((stmt, body))
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    walk(inner)
            for handler in getattr(stmt, "handlers", []):
                walk(handler.body)

    walk(tree.body)  # type: ignore[attr-defined]
    return sorted(found, key=lambda pair: pair[0].lineno)


def splice(program: str, fragment: str) -> str:
    """``fragment`` put into ``program`` where its statements match (see the module docstring)."""
    tree = ast.parse(program)
    frag = compile(fragment, "<fragment>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    candidates = _statements(tree)
    imports = [
        ast.get_source_segment(fragment, s) or ""
        for s in frag.body
        if _key(s) is None and isinstance(s, ast.Import | ast.ImportFrom)
    ]
    matched: list[ast.stmt] = []
    position = 0
    for stmt in frag.body:
        key = _key(stmt)
        if key is None:
            continue
        for index in range(position, len(candidates)):
            if _key(candidates[index][0]) == key:
                matched.append(candidates[index][0])
                position = index + 1
                break
    if not matched:
        raise SpliceError(
            "the fragment matches no statement of the program it names: it says nowhere where it goes"
        )
    first, last = matched[0], matched[-1]
    body = next(b for s, b in candidates if s is first)
    if not any(s is last for s in body):
        raise SpliceError(
            f"matched statements are in different blocks (lines {first.lineno} and {last.lineno})"
        )
    lines = program.splitlines()
    indent = " " * first.col_offset
    code = [
        ast.get_source_segment(fragment, s) or ""
        for s in frag.body
        if not isinstance(s, ast.Import | ast.ImportFrom)
    ]
    new = [indent + line if line else line for text in code for line in text.splitlines()]
    end = last.end_lineno or last.lineno
    result = lines[: first.lineno - 1] + new + lines[end:]
    return "\n".join([*imports, *result]) + "\n"


def spliced(block: Block) -> str:
    """The program ``block`` goes into, with it (and what it builds on) spliced in."""
    target = NAMED.get(attributes(block.info)["into"])
    if target is None:
        raise SpliceError(
            f"{block.label}: into={attributes(block.info)['into']} names no program or fragment"
        )
    base = spliced(target) if target in FRAGMENTS else target.code
    return splice(base, block.code)


def _unactivated_env() -> dict[str, str]:
    """The environment of a shell where the venv was never activated."""
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(venv_bin)
    )
    return env


def run_program(
    code: str, workdir: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    script = workdir / "example.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, script.name],
        cwd=workdir,
        env={**_unactivated_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_the_readme_has_a_complete_example_and_marks_the_rest_as_fragments() -> None:
    assert PROGRAMS, "README.md has no complete ```python example"
    unknown = [b.label for b in BLOCKS if b.info.startswith("python") and b not in PROGRAMS + FRAGMENTS]
    assert not unknown, (
        f"python blocks with an unknown marker (use ```python or ```python fragment): {unknown}"
    )


@pytest.mark.parametrize("block", PROGRAMS, ids=lambda b: f"line{b.line}")
def test_complete_example_runs_as_a_file(block: Block, tmp_path: Path) -> None:
    result = run_program(block.code, tmp_path)

    assert result.returncode == 0, (
        f"{block.label} failed when run as a file (exit {result.returncode}). Make it a complete program, "
        f"or mark it ```python fragment.\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )


@pytest.mark.parametrize("block", FRAGMENTS, ids=lambda b: f"line{b.line}")
def test_fragment_compiles(block: Block) -> None:
    compile(block.code, block.label, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def run_placed(
    block: Block, workdir: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    code = spliced(block)
    result = run_program(code, workdir, env)
    assert result.returncode == 0, (
        f"{block.label} spliced into {attributes(block.info)['into']} failed (exit {result.returncode})."
        f"\n--- program\n{code}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )
    return result


@pytest.mark.parametrize(
    "block", [b for b in PLACED if "DATABASE_URL" not in b.code], ids=lambda b: f"line{b.line}"
)
def test_fragment_runs_where_it_says_it_goes(block: Block, tmp_path: Path) -> None:
    run_placed(block, tmp_path)


def placed(marker: str) -> Block:
    (block,) = [b for b in PLACED if marker in b.code]
    return block


def test_answer_everything_at_once_uses_the_example_s_own_ids(tmp_path: Path) -> None:
    out = run_placed(placed("answer everything at once"), tmp_path).stdout
    assert "Deleted todo.txt" in out and "Booked Rome on 2026-12-24" in out


def test_the_compat_loop_answers_until_the_thread_finishes(tmp_path: Path) -> None:
    out = run_placed(placed("until the thread finishes"), tmp_path).stdout
    assert out.count("waiting: approval for call_delete_file_1") == 1
    assert out.count("waiting: elicitation for call_book_trip_1") == 1
    # the model's summary, not its plan
    assert "Deleted todo.txt" in out and "Booked Rome on 2026-12-24" in out
    assert "I'll run" not in out.strip().splitlines()[-1]


def test_the_graph_example_pauses_twice_and_finishes_with_one_resume(tmp_path: Path) -> None:
    graph_example = NAMED["example.py"]

    result = run_program(graph_example.code, tmp_path)

    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "waiting: approval for call_delete_file_1 - demo_delete_file" in out
    assert "waiting: elicitation for call_book_trip_1 - demo_book_trip" in out
    assert "question langgraph_mcp.examples.demo_server:ask_date - When do you want to travel to Rome?" in out
    assert "Deleted todo.txt" in out and "Booked Rome on 2026-12-24" in out


def test_the_parallel_example_goes_back_to_the_model_once_after_both_results(tmp_path: Path) -> None:
    result = run_program(NAMED["parallel.py"].code, tmp_path)

    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    runs = [line for line in lines if line.startswith("model runs after")]
    assert runs == ["model runs after 0 tool results", "model runs after 2 tool results"]
    answer = result.stdout.split(runs[-1], 1)[1]
    assert "Here is what happened:" in answer
    assert "- demo_list_files: notes.txt" in answer and "- demo_get_forecast: " in answer


def test_the_create_agent_example_asks_only_about_the_destructive_call(tmp_path: Path) -> None:
    result = run_program(NAMED["agent.py"].code, tmp_path)

    assert result.returncode == 0, result.stderr[-3000:]
    waiting = [line for line in result.stdout.splitlines() if line.startswith("waiting:")]
    assert sorted(waiting) == [
        "waiting: approval for call_delete_file_1 - demo_delete_file",
        "waiting: elicitation for call_book_trip_1 - demo_book_trip",
    ]
    assert "Deleted todo.txt" in result.stdout and "Booked Rome on 2026-12-24" in result.stdout


def test_the_policy_example_shows_each_rule_deciding(tmp_path: Path) -> None:
    (program,) = [b for b in PROGRAMS if "outside_home" in b.code and "policy.toml" in b.code]

    result = run_program(program.code, tmp_path)

    assert result.returncode == 0, result.stderr[-3000:]
    verdicts = [line.split(" (", 1)[0] for line in result.stdout.splitlines()]
    assert verdicts == [
        "demo_delete_file {'path': 'scratch/tmp.txt'}: allow by scratch-deletes",
        "demo_delete_file {'path': 'todo.txt'}: ask by destructive",
        "demo_delete_file {'path': 'scratch/../todo.txt'}: deny by stay-in-workspace",
        "demo_write_file {'path': 'etc/a.txt', 'content': 'x'}: ask by when:demo_write_file:outside_home",
        "demo_reset_stats {}: allow by admins-reset",
        "demo_list_files {}: allow by hints:read-only",
        "  matched but lost: rules destructive -> ask",
        "  matched but lost: built-in hints:destructive -> ask",
    ]


def test_the_remember_example_prints_what_the_readme_says(tmp_path: Path) -> None:
    (program,) = [b for b in PROGRAMS if "revoke_approvals" in b.code]
    printed = (
        README.read_text(encoding="utf-8")
        .split(program.code, 1)[1]
        .split("```text\n", 1)[1]
        .split("```", 1)[0]
    )

    result = run_program(program.code, tmp_path)

    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == printed.splitlines()


def test_persistence_recipe_pauses_in_one_process_and_resumes_in_another(tmp_path: Path) -> None:
    result = run_program(NAMED["persist.py"].code, tmp_path)

    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == "process 1 paused on: ['call_book_trip_1', 'call_delete_file_1']"
    assert lines[1].startswith("process 2: Here is what happened:")
    assert "Deleted todo.txt" in result.stdout and "Booked Rome on 2026-12-24" in result.stdout
    assert (tmp_path / "threads.sqlite").exists()


@pytest.fixture
def pg_database_url() -> Iterator[str]:
    """A fresh PostgreSQL database (the CI server, or a throwaway cluster), dropped afterwards."""
    from tests.support import pg_cluster

    def unavailable(reason: str) -> None:
        if os.environ.get(pg_cluster.REQUIRE_ENV) == "1":
            pytest.fail(f"PostgreSQL required ({pg_cluster.REQUIRE_ENV}=1) but unavailable: {reason}")
        pytest.skip(f"PostgreSQL unavailable: {reason}")

    try:
        import langgraph.checkpoint.postgres  # noqa: F401
        import psycopg
    except ImportError as exc:
        unavailable(f"{exc.name} is not installed (pip install -e '.[test]')")
    server, root = os.environ.get(pg_cluster.DSN_ENV), None
    if not server:
        try:
            root, server = pg_cluster.start()
        except pg_cluster.PgUnavailable as exc:
            unavailable(str(exc))
    assert server is not None
    name = f"readme_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        yield server.rsplit("/", 1)[0] + f"/{name}"
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        if root is not None:
            pg_cluster.stop(root)


def test_persistence_recipe_on_postgresql(tmp_path: Path, pg_database_url: str) -> None:
    block = placed("AsyncPostgresSaver")

    result = run_placed(block, tmp_path, {"DATABASE_URL": pg_database_url})

    lines = result.stdout.splitlines()
    assert lines[0] == "process 1 paused on: ['call_book_trip_1', 'call_delete_file_1']"
    assert "Deleted todo.txt" in result.stdout and "Booked Rome on 2026-12-24" in result.stdout
    assert not (tmp_path / "threads.sqlite").exists()


def test_splice_replaces_from_the_first_match_to_the_last_and_hoists_imports() -> None:
    program = (
        "import sys\n\n"
        "policy = 1\n\n"
        "async def main():\n"
        "    out = await run(1)\n"
        "    print('old')\n"
        "    command = make(out)\n"
        "    out = await run(command)\n"
        "    print(out)\n"
    )
    fragment = "import os\n(x,) = [os.sep]\ncommand = other(out, x)\nout = await run(command)\n"

    result = splice(program, fragment)

    assert result.splitlines() == [
        "import os",
        "import sys",
        "",
        "policy = 1",
        "",
        "async def main():",
        "    out = await run(1)",
        "    print('old')",
        "    (x,) = [os.sep]",
        "    command = other(out, x)",
        "    out = await run(command)",
        "    print(out)",
    ]
    with pytest.raises(SpliceError, match="says nowhere"):
        splice(program, "nothing = 1\n")


def test_fragment_marker_and_extraction_rule() -> None:
    text = "# A\n```python\nprint(1)\n```\n## B\n```python fragment\nawait x\n```\n```bash\nls\n```\n"
    blocks = readme_blocks(text)
    assert [(b.line, b.heading, b.info) for b in blocks] == [
        (2, "A", "python"),
        (6, "B", "python fragment"),
        (9, "B", "bash"),
    ]
