"""The code in README.md and in every page of docs/ runs as a new user runs it: pasted into a file, run with the
venv's Python.

Extraction rule (for everyone who adds a code block to the README or to a docs page):

* Every fenced block opened with ```` ```python ```` (optionally followed by ``name=FILE``) is a **complete
  program**. It is written to ``example.py`` in an empty temporary directory and run as ``<venv python>
  example.py`` with the venv *not* activated (its ``bin`` directory removed from ``PATH``, no ``VIRTUAL_ENV``),
  so it must import everything it uses, start servers with ``sys.executable`` and end by running itself
  (``asyncio.run(main())``). It passes when it exits 0 within :data:`TIMEOUT` seconds. ``name=FILE`` names it
  (the file the page tells the reader to save it as), so fragments can say they go into it. A ```` ```text
  output ```` block right after a program is what it prints: the program's stdout must be exactly that.
* A block opened with ```` ```python fragment into=NAME ```` is a piece of a larger program of the same page (a
  named program, or another named fragment, ``name=NAME``, spliced into its own target first; ``into=PAGE:NAME``
  for one on another page, ``PAGE`` relative to this one): it is **spliced** into that program (:func:`splice`)
  and the result must run like a program.
* ```` ```toml ```` blocks are parsed (``policy``: loaded as an ``ApprovalPolicy`` file, its ``[[tests]]`` run);
  ```` ```json ```` blocks are parsed (``servers``: loaded as an ``McpServers`` config); ```` ```bash run ````
  blocks run with ``bash -e`` in the repository root, the venv's ``bin`` first on ``PATH``, and must exit 0.
* Every other block says it does not run, with the word ``no-run`` in its fence (```` ```bash no-run ````:
  install and deploy commands, commands that need servers of yours, a file's excerpt). An unmarked block that
  none of the rules above runs fails :func:`test_every_block_runs_or_says_it_does_not`.

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
import json
import os
import re
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import HANG_GUARD

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
TIMEOUT = HANG_GUARD
NO_RUN = "no-run"
SHELLS = ("bash", "sh", "console", "shell")
_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    path: str
    line: int
    heading: str
    info: str
    code: str

    @property
    def label(self) -> str:
        return f"{self.path}:{self.line} ({self.heading})"

    @property
    def words(self) -> list[str]:
        return self.info.split()


def readme_blocks(text: str, path: str = "README.md") -> list[Block]:
    """Every fenced code block of ``text`` with its line number and the heading above it."""
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()]
        headings = re.findall(r"^#+ (.+)$", before, re.M)
        blocks.append(
            Block(
                path=path,
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
    words = block.words
    return words[:1] == ["python"] and all("=" in w for w in words[1:])


def _relative(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


BLOCKS = [b for page in PAGES for b in readme_blocks(page.read_text(encoding="utf-8"), _relative(page))]
PROGRAMS = [b for b in BLOCKS if is_program(b)]
FRAGMENTS = [b for b in BLOCKS if b.words[:2] == ["python", "fragment"]]
PLACED = [b for b in FRAGMENTS if "into" in attributes(b.info)]
NAMED = {
    (b.path, attributes(b.info)["name"]): b for b in PROGRAMS + FRAGMENTS if "name" in attributes(b.info)
}
OUTPUTS = {BLOCKS[i - 1]: b for i, b in enumerate(BLOCKS) if b.words[:2] == ["text", "output"] and i > 0}


def is_shell_run(block: Block) -> bool:
    return bool(block.words) and block.words[0] in SHELLS and "run" in block.words[1:]


SHELL_RUNS = [b for b in BLOCKS if is_shell_run(b)]


def _unique_by_code(blocks: list[Block]) -> list[Block]:
    """The first of each distinct program (the README and a docs page may show the same one: run it once)."""
    seen: dict[str, Block] = {}
    for block in blocks:
        seen.setdefault(block.code, block)
    return list(seen.values())


def named(path: str, name: str) -> Block:
    block = NAMED.get((path, name))
    assert block is not None, f"{path} has no block name={name}"
    return block


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


def _target(block: Block) -> tuple[str, str]:
    """Where ``into=`` points: ``NAME`` on the block's own page, or ``PAGE:NAME`` (relative to the page)."""
    into = attributes(block.info)["into"]
    if ":" not in into:
        return block.path, into
    page, name = into.split(":", 1)
    return (ROOT / block.path).parent.joinpath(page).resolve().relative_to(ROOT).as_posix(), name


def spliced(block: Block) -> str:
    """The program ``block`` goes into, with it (and what it builds on) spliced in."""
    target = NAMED.get(_target(block))
    if target is None:
        raise SpliceError(
            f"{block.label}: into={attributes(block.info)['into']} names no program or fragment "
            f"(PAGE:NAME for another page's)"
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


def program_env(code: str) -> dict[str, str]:
    """The environment a README program runs in: a shell where the venv was never activated, plus the mcp SDK's
    ``simple-auth`` example servers for a program that starts them (``.[dev]`` cannot install them: they are not on
    PyPI; the tests obtain them as the OAuth tier does, so the README's test command needs no step by hand)."""
    env = _unactivated_env()
    if "mcp_simple_auth" in code:
        from tests.support.oauth_support import example_path

        extra = example_path()
        if extra is not None:
            env["PYTHONPATH"] = extra
    return env


def run_program(
    code: str, workdir: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    script = workdir / "example.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, script.name],
        cwd=workdir,
        env={**program_env(code), **(env or {})},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


Run = tuple[subprocess.CompletedProcess[str], Path]
Ran = Callable[[Block], Run]
_RUNS: dict[str, Run] = {}


@pytest.fixture
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """``ran(block)``: the program's run (once per distinct program in the session) and its directory."""

    def run(block: Block) -> Run:
        if block.code not in _RUNS:
            workdir = tmp_path_factory.mktemp("program")
            _RUNS[block.code] = (run_program(block.code, workdir), workdir)
        result, workdir = _RUNS[block.code]
        assert result.returncode == 0, (
            f"{block.label} failed when run as a file (exit {result.returncode}). Make it a complete program, "
            f"or mark it ```python fragment into=NAME.\n--- stdout\n{result.stdout[-3000:]}"
            f"\n--- stderr\n{result.stderr[-3000:]}"
        )
        return result, workdir

    return run


def _how_it_runs(block: Block) -> str | None:
    """What runs ``block`` (see the module docstring), or ``None`` when nothing does."""
    words = block.words
    if block in PROGRAMS:
        return "run as a program"
    if block in PLACED:
        return "spliced into its program and run"
    if words[:2] == ["text", "output"]:
        return "compared with its program's output"
    if words[:1] == ["toml"]:
        return "parsed as TOML"
    if words[:1] == ["json"]:
        return "parsed as JSON"
    if is_shell_run(block):
        return "run with bash"
    return None


def test_every_block_runs_or_says_it_does_not() -> None:
    assert [b for b in PROGRAMS if b.path == "README.md"], "README.md has no complete ```python example"
    silent = [f"{b.label}: ```{b.info}" for b in BLOCKS if _how_it_runs(b) is None and NO_RUN not in b.words]
    assert not silent, (
        "code blocks that no test runs: make each a complete ```python program, a ```python fragment "
        "into=NAME, a ```bash run command, or say it does not run with ```LANG no-run:\n" + "\n".join(silent)
    )
    misplaced = [b.label for prev, b in OUTPUTS.items() if prev not in PROGRAMS]
    assert not misplaced, f"```text output blocks must follow the program whose output they are: {misplaced}"


@pytest.mark.parametrize("block", _unique_by_code(PROGRAMS), ids=lambda b: f"{b.path}:{b.line}")
def test_complete_example_runs_as_a_file(block: Block, ran: Ran) -> None:
    result, _ = ran(block)

    printed = OUTPUTS.get(block)
    if printed is not None:
        assert result.stdout.splitlines() == printed.code.splitlines(), (
            f"{block.label} printed something else than the ```text output block after it says"
        )


@pytest.mark.parametrize("block", FRAGMENTS, ids=lambda b: f"{b.path}:{b.line}")
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


def placed(marker: str) -> Block:
    (block,) = [b for b in PLACED if marker in b.code and b.path != "README.md"]
    return block


SPECIFIC = ("answer everything at once", "until the thread finishes", "DATABASE_URL")


@pytest.mark.parametrize(
    "block",
    [b for b in PLACED if not any(marker in b.code for marker in SPECIFIC)],
    ids=lambda b: f"{b.path}:{b.line}",
)
def test_fragment_runs_where_it_says_it_goes(block: Block, tmp_path: Path) -> None:
    run_placed(block, tmp_path)


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.words[:1] == ["toml"]], ids=lambda b: f"{b.path}:{b.line}"
)
def test_toml_block_parses_and_a_policy_block_loads(block: Block, tmp_path: Path) -> None:
    tomllib.loads(block.code)
    if "policy" in block.words[1:]:
        from langgraph_mcp import ApprovalPolicy

        (tmp_path / "policy.toml").write_text(block.code, encoding="utf-8")
        ApprovalPolicy.load(tmp_path / "policy.toml")  # runs its [[tests]]


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.words[:1] == ["json"]], ids=lambda b: f"{b.path}:{b.line}"
)
def test_json_block_parses_and_a_servers_block_loads(block: Block) -> None:
    value = json.loads(block.code)
    if "servers" in block.words[1:]:
        from langgraph_mcp import McpServersConfig

        McpServersConfig.load(value)


@pytest.mark.parametrize("block", SHELL_RUNS, ids=lambda b: f"{b.path}:{b.line}")
def test_shell_block_runs_in_the_repository(block: Block) -> None:
    venv_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        ["bash", "-e", "-c", block.code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, (
        f"{block.label} exited {result.returncode}\n--- stdout\n{result.stdout[-3000:]}"
        f"\n--- stderr\n{result.stderr[-3000:]}"
    )


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


def test_the_graph_example_pauses_twice_and_finishes_with_one_resume(ran: Ran) -> None:
    result, _ = ran(named("README.md", "example.py"))

    out = result.stdout
    assert "waiting: approval for call_delete_file_1 - demo_delete_file" in out
    assert "waiting: elicitation for call_book_trip_1 - demo_book_trip" in out
    assert "question langgraph_mcp.examples.demo_server:ask_date - When do you want to travel to Rome?" in out
    assert "Deleted todo.txt" in out and "Booked Rome on 2026-12-24" in out


def test_the_parallel_example_goes_back_to_the_model_once_after_both_results(ran: Ran) -> None:
    result, _ = ran(named("docs/tool-node.md", "parallel.py"))

    lines = result.stdout.splitlines()
    runs = [line for line in lines if line.startswith("model runs after")]
    assert runs == ["model runs after 0 tool results", "model runs after 2 tool results"]
    answer = result.stdout.split(runs[-1], 1)[1]
    assert "Here is what happened:" in answer
    assert "- demo_list_files: notes.txt" in answer and "- demo_get_forecast: " in answer


def test_the_create_agent_example_asks_only_about_the_destructive_call(ran: Ran) -> None:
    result, _ = ran(named("docs/gate.md", "agent.py"))

    waiting = [line for line in result.stdout.splitlines() if line.startswith("waiting:")]
    assert sorted(waiting) == [
        "waiting: approval for call_delete_file_1 - demo_delete_file",
        "waiting: elicitation for call_book_trip_1 - demo_book_trip",
    ]
    assert "Deleted todo.txt" in result.stdout and "Booked Rome on 2026-12-24" in result.stdout


def test_the_policy_example_shows_each_rule_deciding(ran: Ran) -> None:
    (program,) = [b for b in PROGRAMS if "outside_home" in b.code and "policy.toml" in b.code]

    result, _ = ran(program)

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


def test_the_remember_example_prints_what_its_page_says(ran: Ran) -> None:
    (program,) = [b for b in PROGRAMS if "revoke_approvals" in b.code]
    assert program in OUTPUTS, f"{program.label} has no ```text output block after it"

    result, _ = ran(program)

    assert result.stdout.splitlines() == OUTPUTS[program].code.splitlines()


def test_persistence_recipe_pauses_in_one_process_and_resumes_in_another(ran: Ran) -> None:
    result, workdir = ran(named("docs/persistence.md", "persist.py"))

    lines = result.stdout.splitlines()
    assert lines[0] == "process 1 paused on: ['call_book_trip_1', 'call_delete_file_1']"
    assert lines[1].startswith("process 2: Here is what happened:")
    assert "Deleted todo.txt" in result.stdout and "Booked Rome on 2026-12-24" in result.stdout
    assert (workdir / "threads.sqlite").exists()


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
    blocks = readme_blocks(text, "page.md")
    assert [(b.line, b.heading, b.info) for b in blocks] == [
        (2, "A", "python"),
        (6, "B", "python fragment"),
        (9, "B", "bash"),
    ]


def test_a_block_nothing_runs_must_say_no_run() -> None:
    text = "# A\n```bash\nls\n```\n```bash no-run\nls\n```\n```bash run\nls\n```\n```html\n<p>\n```\n"
    unmarked, marked, shell, html = readme_blocks(text, "page.md")

    assert _how_it_runs(unmarked) is None and NO_RUN not in unmarked.words  # fails the check above
    assert NO_RUN in marked.words
    assert _how_it_runs(shell) == "run with bash"
    assert _how_it_runs(html) is None


def test_a_readme_program_that_starts_the_oauth_example_finds_it_without_a_step_by_hand() -> None:
    """On a fresh clone ``pip install -e ".[dev]"`` does not install ``mcp_simple_auth``: the test command must
    obtain it itself (CI used to install it by hand before running the tests)."""
    assert "oauth_support.py install" not in (README.parent / ".ci" / "run").read_text()
    code = "import mcp_simple_auth.auth_server, mcp_simple_auth.server"
    found = subprocess.run(
        [sys.executable, "-c", code],
        env=program_env(code),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert found.returncode == 0, found.stderr[-2000:]
