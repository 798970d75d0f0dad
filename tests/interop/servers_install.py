"""Install the pinned third-party MCP servers the interop tier runs against, into a reusable cache.

What gets installed (versions pinned here, nowhere else):

* npm ``@modelcontextprotocol/server-filesystem`` and ``@modelcontextprotocol/server-memory`` into
  ``<cache>/npm`` (``npm install --prefix``);
* PyPI ``mcp-server-time`` + ``mcp-server-git`` at the *latest* pins (built on mcp 2.3: speak 2026-07-28 by
  default, the 2025-11-25 handshake when forced) into the venv ``<cache>/py-latest``;
* the same two at the *old* pins (built on mcp 1.30: handshake era only) into the venv ``<cache>/py-old``.

The cache is ``$LANGGRAPH_MCP_INTEROP_CACHE`` or ``.cache/interop`` at the repository root. Each part writes a
marker file naming its pins once it installed completely; a part whose marker matches its pins (and whose
entry points exist) is not installed again, so a warm run costs nothing. Change a pin and that part
reinstalls.

Pre-warm the cache (e.g. before going offline) with::

    python tests/interop/servers_install.py          # or: --force to reinstall everything

Only the ordinary clients are used (``npm``, ``pip``), against the registries this machine is set up for.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = "LANGGRAPH_MCP_INTEROP_CACHE"

NPM_PACKAGES = {
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "@modelcontextprotocol/server-memory": "2026.8.31",
}
EXT_APPS_PACKAGES = {
    "@modelcontextprotocol/server": "2.4.0",
    "@modelcontextprotocol/ext-apps": "2.0.4",
    "zod": "4.6.7",
}
"""The TypeScript MCP SDK with ``@modelcontextprotocol/ext-apps``' server helpers, for ``ext_apps_server.mjs`` (an MCP
Apps server on another implementation than the Python SDK's)."""
EXT_APPS_SERVER = Path(__file__).resolve().parent / "ext_apps_server.mjs"
PY_LATEST = {"mcp-server-time": "2026.10.19", "mcp-server-git": "2026.10.19"}
PY_OLD = {"mcp-server-time": "2026.8.18", "mcp-server-git": "2026.8.18"}

MARKER = ".langgraph-mcp-interop.json"
INSTALL_TIMEOUT = 900


class InstallError(RuntimeError):
    """A pinned server could not be installed; the message carries the installer's output."""


@dataclass(frozen=True)
class PythonServers:
    """A venv holding ``mcp-server-time`` and ``mcp-server-git`` at one pair of pins."""

    venv: Path
    pins: dict[str, str]

    @property
    def time_command(self) -> str:
        return str(self.venv / "bin" / "mcp-server-time")

    @property
    def git_command(self) -> str:
        return str(self.venv / "bin" / "mcp-server-git")

    @property
    def mcp_version(self) -> str:
        """The ``mcp`` SDK version pip resolved into this venv (read from its dist-info)."""
        for meta in (self.venv / "lib").glob("python3*/site-packages/mcp-*.dist-info"):
            return meta.name.removeprefix("mcp-").removesuffix(".dist-info")
        return "unknown"


@dataclass(frozen=True)
class Installed:
    """Where the pinned servers are; every path exists."""

    cache: Path
    npm_prefix: Path
    ext_apps_prefix: Path
    latest: PythonServers
    old: PythonServers
    seconds: float
    """Wall time install() took (near zero on a warm cache)."""
    installed_now: tuple[str, ...]
    """The parts installed by this call (empty on a warm cache)."""

    @property
    def node(self) -> str:
        node = shutil.which("node")
        if node is None:
            raise InstallError("node is not on PATH")
        return node

    @property
    def filesystem_js(self) -> str:
        return str(self.npm_prefix / "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")

    @property
    def ext_apps_server_js(self) -> str:
        """``ext_apps_server.mjs``, copied beside its ``node_modules`` (ESM resolves imports from the script's folder)."""
        return str(self.ext_apps_prefix / EXT_APPS_SERVER.name)

    @property
    def memory_js(self) -> str:
        return str(self.npm_prefix / "node_modules/@modelcontextprotocol/server-memory/dist/index.js")


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser().resolve() if configured else REPO_ROOT / ".cache" / "interop"


def _run(cmd: list[str], what: str, cwd: Path | None = None) -> None:
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except FileNotFoundError as exc:
        raise InstallError(f"{what}: command not found: {cmd[0]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"{what}: {' '.join(cmd)} did not finish within {INSTALL_TIMEOUT}s") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
        raise InstallError(f"{what}: {' '.join(cmd)} exited {proc.returncode}:\n{tail}")


def _marker_ok(directory: Path, pins: dict[str, str], entry_points: list[Path]) -> bool:
    try:
        recorded = json.loads((directory / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return recorded == {"pins": pins} and all(p.exists() for p in entry_points)


def _write_marker(directory: Path, pins: dict[str, str]) -> None:
    (directory / MARKER).write_text(json.dumps({"pins": pins}, indent=2, sort_keys=True) + "\n")


def _install_npm(
    prefix: Path, force: bool, packages: dict[str, str] = NPM_PACKAGES, entry: list[Path] | None = None
) -> bool:
    entry = entry or [
        prefix / "node_modules" / name / "dist" / "index.js"
        for name in packages  # the filesystem and memory packages ship dist/index.js
    ]
    if not force and _marker_ok(prefix, packages, entry):
        return False
    if prefix.exists():
        shutil.rmtree(prefix)
    prefix.mkdir(parents=True)
    specs = [f"{name}@{version}" for name, version in packages.items()]
    _run(
        ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--save-exact", *specs],
        f"npm install of {', '.join(packages)}",
    )
    missing = [str(p) for p in entry if not p.exists()]
    if missing:
        raise InstallError(f"npm install finished but these entry points are missing: {missing}")
    _write_marker(prefix, packages)
    return True


def _install_venv(venv: Path, pins: dict[str, str], force: bool) -> bool:
    servers = PythonServers(venv, pins)
    entry = [Path(servers.time_command), Path(servers.git_command)]
    if not force and _marker_ok(venv, pins, entry):
        return False
    if venv.exists():
        shutil.rmtree(venv)
    what = f"venv {venv.name} ({', '.join(f'{n}=={v}' for n, v in pins.items())})"
    _run([sys.executable, "-m", "venv", str(venv)], what)
    specs = [f"{name}=={version}" for name, version in pins.items()]
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *specs], what)
    missing = [str(p) for p in entry if not p.exists()]
    if missing:
        raise InstallError(f"{what}: pip finished but these entry points are missing: {missing}")
    _write_marker(venv, pins)
    return True


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    """One installer at a time per cache (parallel pytest runs share it)."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def install(cache: Path | None = None, *, force: bool = False) -> Installed:
    """Install whatever part of the pinned set the cache lacks; raise :class:`InstallError` on failure."""
    cache = cache or cache_dir()
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise InstallError(
            f"{' and '.join(missing)} not on PATH (the filesystem and memory servers need Node.js)"
        )
    started = time.monotonic()
    done: list[str] = []
    with _locked(cache):
        if _install_npm(cache / "npm", force):
            done.append("npm")
        apps = cache / "npm-ext-apps"
        server = (
            apps
            / "node_modules"
            / "@modelcontextprotocol"
            / "ext-apps"
            / "dist"
            / "src"
            / "server"
            / "index.js"
        )
        if _install_npm(apps, force, EXT_APPS_PACKAGES, [server]):
            done.append("npm-ext-apps")
        shutil.copy(EXT_APPS_SERVER, apps / EXT_APPS_SERVER.name)
        for label, pins in (("py-latest", PY_LATEST), ("py-old", PY_OLD)):
            if _install_venv(cache / label, pins, force):
                done.append(label)
    return Installed(
        cache=cache,
        npm_prefix=cache / "npm",
        ext_apps_prefix=cache / "npm-ext-apps",
        latest=PythonServers(cache / "py-latest", PY_LATEST),
        old=PythonServers(cache / "py-old", PY_OLD),
        seconds=time.monotonic() - started,
        installed_now=tuple(done),
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        installed = install(force="--force" in args)
    except InstallError as exc:
        print(f"interop install FAILED: {exc}", file=sys.stderr)
        return 1
    what = ", ".join(installed.installed_now) or "nothing (cache was warm)"
    print(f"interop servers in {installed.cache}: installed {what} in {installed.seconds:.1f}s")
    print(f"  py-latest: mcp {installed.latest.mcp_version}; py-old: mcp {installed.old.mcp_version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
