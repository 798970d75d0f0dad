"""What the browser tier needs: Agent Chat UI installed from its vendored source, Debian's chromium, playwright-core,
and the three servers (``langgraph dev``, ``next dev``) started on loopback and stopped again.

Where things come from
    * Agent Chat UI: ``$LANGGRAPH_MCP_AGENT_CHAT_UI``, else ``shared/vendor/agent-chat-ui`` beside (or one level
      above) the checkout. Never edited: it is copied to ``<cache>/ui-<hash of its files>`` and ``npm install``-ed
      there once (about a minute cold; nothing warm).
    * playwright-core (npm, pinned below) in ``<cache>/driver-<version>``; it never downloads a browser.
    * chromium: ``/usr/bin/chromium`` (Debian's ``chromium`` package; ``.ci/run`` installs it).

    ``<cache>`` is ``$LANGGRAPH_MCP_BROWSER_CACHE``, else ``~/.cache/langgraph-mcp-browser``.

Skipping
    When something is missing the tier skips, saying what, unless ``LANGGRAPH_MCP_REQUIRE_BROWSER=1`` (``.ci/run``
    sets it): then it fails instead, so CI can never pass by skipping.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
REQUIRE_ENV = "LANGGRAPH_MCP_REQUIRE_BROWSER"
SOURCE_ENV = "LANGGRAPH_MCP_AGENT_CHAT_UI"
CACHE_ENV = "LANGGRAPH_MCP_BROWSER_CACHE"
ARTIFACTS_ENV = "LANGGRAPH_MCP_ARTIFACTS"
CHROMIUM = Path("/usr/bin/chromium")
PLAYWRIGHT_CORE = "1.65.1"
INSTALL_TIMEOUT = 600.0
STARTUP_TIMEOUT = 180.0
LOCK_TIMEOUT = 900.0


class BrowserUnavailable(RuntimeError):
    """The tier cannot run here (the message says what is missing and how to get it)."""


def unavailable(why: str) -> None:
    """Skip the test saying ``why``; fail instead when the tier is required (CI)."""
    if os.environ.get(REQUIRE_ENV, "").strip() in {"1", "true", "yes"}:
        pytest.fail(f"the browser tier is required ({REQUIRE_ENV}=1) but unavailable: {why}")
    pytest.skip(f"browser tier unavailable: {why}")


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "langgraph-mcp-browser")


def artifacts_dir() -> Path:
    """Where screenshots go: ``$LANGGRAPH_MCP_ARTIFACTS/browser``, else ``tests/browser/artifacts`` (gitignored)."""
    base = os.environ.get(ARTIFACTS_ENV)
    path = Path(base) / "browser" if base else HERE / "artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


def ui_source() -> Path:
    candidates = [Path(p) for p in [os.environ.get(SOURCE_ENV)] if p]
    candidates += [
        parent / "shared" / "vendor" / "agent-chat-ui" for parent in (ROOT.parent, ROOT.parent.parent)
    ]
    for candidate in candidates:
        if (candidate / "package.json").exists():
            return candidate
    raise BrowserUnavailable(
        "Agent Chat UI's source not found (looked in "
        + ", ".join(map(str, candidates))
        + f"): set {SOURCE_ENV}"
    )


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "node_modules" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def _npm(args: list[str], cwd: Path, log: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise BrowserUnavailable("npm not found: install Node.js 20 and npm")
    env = {**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", "NEXT_TELEMETRY_DISABLED": "1"}
    with log.open("ab") as out:
        done = subprocess.run(
            [npm, *args, "--no-audit", "--no-fund"],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise BrowserUnavailable(f"`npm {' '.join(args)}` in {cwd} failed ({done.returncode}):\n{tail}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (another test run using the same install waits its turn, bounded)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise BrowserUnavailable(
                        f"{path} stayed locked by another test run for {LOCK_TIMEOUT:g}s"
                    ) from None
                time.sleep(0.5)  # waiting on another process's file lock, not synchronising tasks
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def installed_ui() -> Path:
    """The installed copy of Agent Chat UI (copied and ``npm install``-ed on first use)."""
    source = ui_source()
    target = cache_dir() / f"ui-{_tree_hash(source)}"
    if (target / ".installed").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    for path in [target, *target.rglob("*")]:  # the vendored tree is read-only
        path.chmod(path.stat().st_mode | 0o200)
    _npm(["install"], target, target / "npm-install.log")
    (target / ".installed").write_text("ok\n")
    return target


def installed_driver() -> Path:
    """The folder whose ``node_modules`` holds playwright-core (installed on first use)."""
    target = cache_dir() / f"driver-{PLAYWRIGHT_CORE}"
    if (target / ".installed").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    manifest = {"private": True, "dependencies": {"playwright-core": PLAYWRIGHT_CORE}}
    (target / "package.json").write_text(json.dumps(manifest))
    _npm(["install"], target, target / "npm-install.log")
    (target / ".installed").write_text("ok\n")
    return target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"{what} exited with {process.returncode}:\n{log.read_text(errors='replace')[-4000:]}"
            )
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)  # polling a subprocess's port, not synchronising tasks
    pytest.fail(
        f"{what} did not answer on {url} within {STARTUP_TIMEOUT:g}s:\n{log.read_text(errors='replace')[-4000:]}"
    )


def _processes() -> dict[int, tuple[int, str]]:
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            table[int(entry.name)] = (int(fields[1]), cmdline.strip())
    return table


def _descendants(root: int) -> dict[int, str]:
    table = _processes()
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, cmdline) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = cmdline
                frontier.append(pid)
    return found


def _wait_gone(pids: Iterable[int], bound: float = 10.0) -> None:
    """Wait (bounded, on pidfds) for processes to exit. A server's stdio MCP servers run in sessions of their own
    (the SDK starts them so) and leave when their stdin closes with the server, just after it."""
    deadline = time.monotonic() + bound
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)


@contextlib.contextmanager
def process_group(
    argv: list[str], *, cwd: Path, env: dict[str, str], log: Path, ready_url: str, what: str
) -> Iterator[int]:
    """Run ``argv`` in its own process group until ``ready_url`` answers 200; at the end kill the group and
    check that nothing it started is left behind."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    children: dict[int, str] = {}
    try:
        _wait_ready(ready_url, process, log, what)
        yield process.pid
    finally:
        children = _descendants(process.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        _wait_gone(children)
        alive = _processes()
        leftovers = {pid: cmd for pid, cmd in children.items() if pid in alive and alive[pid][1] == cmd}
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert not leftovers, f"processes left behind by {what}: {leftovers}"


@contextlib.contextmanager
def langgraph_dev(
    workdir: Path,
    *,
    graphs: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
    extra_config: dict[str, Any] | None = None,
    links: dict[str, Path] | None = None,
) -> Iterator[str]:
    """``langgraph dev`` on the repository's ``langgraph.json`` (served from a scratch copy, as in
    ``tests/examples/test_studio.py``), on loopback; yields its URL. ``graphs`` (graph id -> ``./path.py:factory``,
    relative to the repository) serves those instead, with ``tests/`` beside the package, and ``extra_config``
    adds keys to that config (``ui``, ``http``); ``links`` (name -> folder) are linked into the project beside it
    (a ``ui`` bundle must lie under the project); ``extra_env`` goes to the server process (the graphs read it)."""
    langgraph = Path(sys.executable).with_name("langgraph")
    if not langgraph.exists():
        raise BrowserUnavailable("langgraph-cli[inmem] is not installed in this environment")
    project = workdir / "project"
    project.mkdir()
    if graphs is None:
        shutil.copy(ROOT / "langgraph.json", project / "langgraph.json")
    else:
        config = {"dependencies": ["."], "graphs": graphs, "env": {}, **(extra_config or {})}
        (project / "langgraph.json").write_text(json.dumps(config))
        (project / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    (project / "langgraph_mcp").symlink_to(ROOT / "langgraph_mcp", target_is_directory=True)
    for name, folder in (links or {}).items():
        (project / name).symlink_to(folder, target_is_directory=True)
    port = free_port()
    env = {
        **os.environ,
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        **(extra_env or {}),
    }
    env.pop("LANGGRAPH_ALLOW_BLOCKING", None)
    url = f"http://127.0.0.1:{port}"
    argv = [str(langgraph), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)]
    with process_group(
        argv,
        cwd=project,
        env=env,
        log=workdir / "langgraph-dev.log",
        ready_url=f"{url}/ok",
        what="langgraph dev",
    ):
        yield url


@contextlib.contextmanager
def next_dev(ui: Path, workdir: Path) -> Iterator[str]:
    """Agent Chat UI's ``next dev`` on loopback (one at a time per installed copy: it writes ``.next`` there);
    yields its URL once the page has been compiled and served."""
    port = free_port()
    env = {**os.environ, "NEXT_TELEMETRY_DISABLED": "1", "PORT": str(port)}
    for key in ("NEXT_PUBLIC_API_URL", "NEXT_PUBLIC_ASSISTANT_ID", "LANGGRAPH_API_URL"):
        env.pop(key, None)  # the page is pointed at the server by its query string, nothing else
    url = f"http://127.0.0.1:{port}"
    argv = [str(ui / "node_modules" / ".bin" / "next"), "dev", "-H", "127.0.0.1", "-p", str(port)]
    with (
        _locked(ui / ".next-dev.lock"),
        process_group(
            argv, cwd=ui, env=env, log=workdir / "next-dev.log", ready_url=f"{url}/", what="next dev"
        ),
    ):
        yield url


@dataclass(frozen=True)
class Browser:
    """Everything a scenario needs: the page URL (pointed at ``langgraph dev``), and the driver's parts."""

    page_url: str
    api_url: str
    driver: Path
    artifacts: Path
    workdir: Path

    def run(
        self,
        name: str,
        steps: list[dict[str, Any]],
        *,
        timeout_ms: int = 60000,
        budget_s: float = 300,
        ui_assets: bool = False,
    ) -> Report:
        """Drive one scenario in a fresh chromium profile; fails the test with the page's text when a step does.
        ``timeout_ms`` bounds each step, ``budget_s`` the whole scenario.

        ``ui_assets``: the page's ``/ui/*`` requests go to ``langgraph dev`` (the generative UI bundle's script is
        served under a root-relative URL, so a page on another origin needs this rewrite, as a deployment's reverse
        proxy would do)."""
        scenario = {
            "ui_assets_from": self.api_url if ui_assets else None,
            "url": self.page_url,
            "chromium": str(CHROMIUM),
            "playwright": str(self.driver / "node_modules" / "playwright-core"),
            "artifacts": str(self.artifacts),
            "name": name,
            "timeout_ms": timeout_ms,
            "steps": steps,
        }
        path = self.workdir / f"{name}.json"
        path.write_text(json.dumps(scenario))
        node = shutil.which("node")
        assert node is not None
        done = subprocess.run(
            [node, str(HERE / "drive.cjs"), str(path)], capture_output=True, timeout=budget_s, check=False
        )
        out = path.with_suffix(".out.json")
        try:
            report: dict[str, Any] = json.loads(out.read_text())
        except (OSError, json.JSONDecodeError):
            pytest.fail(
                f"the driver printed no report (rc {done.returncode}):\n{done.stderr.decode()[-4000:]}"
            )
        (self.artifacts / f"{name}.report.json").write_text(json.dumps(report, indent=1))
        if not report["ok"]:
            last = report["steps"][-1] if report["steps"] else {}
            pytest.fail(
                f"scenario {name!r}, step {len(report['steps'])} {last.get('step')}: {report.get('error')}\n"
                f"toasts: {last.get('toasts')}\nfields: {last.get('fields')}\n"
                f"page text:\n{last.get('text', '')[-3000:]}\nscreenshot: {report.get('failed_shot')}"
            )
        return Report(report["steps"])


@dataclass(frozen=True)
class Report:
    """What the page showed after each step (``text``: visible text; ``toasts``; ``fields``: the card's boxes)."""

    steps: list[dict[str, Any]]

    def after(self, label: str) -> dict[str, Any]:
        """The record of the step whose ``shot`` is ``label``."""
        for step in self.steps:
            if step["step"].get("shot") == label:
                return step
        raise KeyError(label)


def chromium_ready() -> None:
    if not CHROMIUM.exists():
        raise BrowserUnavailable(f"{CHROMIUM} not found: `apt-get install chromium` (Debian)")
    if shutil.which("node") is None:
        raise BrowserUnavailable("node not found: install Node.js 20 and npm")


# `python tests/browser/agent_chat_ui.py install`: install (or check) what the tier needs (.ci/run does, first).
if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python tests/browser/agent_chat_ui.py install")
    try:
        chromium_ready()
        print(f"Agent Chat UI installed in {installed_ui()}")
        print(f"playwright-core installed in {installed_driver()}")
    except BrowserUnavailable as error:
        sys.exit(f"browser tier unavailable: {error}")
