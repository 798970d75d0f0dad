"""The OAuth tier's parts: the mcp SDK's ``simple-auth`` example servers as subprocesses, and a scripted person.

The example (``examples/servers/simple-auth`` of the mcp source distribution: a separate authorization server and
resource server) is not on PyPI as a package of its own. :func:`example_path` makes it importable: already
installed (``.ci/run`` runs ``python tests/support/oauth_support.py install``), or built once from the sdist of the
installed mcp version into a cache directory (``$LANGGRAPH_MCP_OAUTH_CACHE``, default
``~/.cache/langgraph-mcp-oauth``) that the server subprocesses get on their ``PYTHONPATH``.

:func:`sign_in_as_person` does what a person in a browser does: opens the authorization URL, follows it to the
login form, submits the form as shown (the example's demo account is filled in), and stops where the
authorization server redirects the browser, returning that address (the callback URL a redirect page would
hand back).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import httpx2

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "tests" / "support" / "servers" / "oauth_servers.py"
CACHE_ENV = "LANGGRAPH_MCP_OAUTH_CACHE"
START_BOUND = 60.0


def _cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache" / "langgraph-mcp-oauth")
    return Path(base) / f"mcp-{importlib.metadata.version('mcp')}"


def _build_example(target: Path | None) -> None:
    """pip-install the example from the mcp sdist: into this environment (``target=None``) or into ``target``."""
    version = importlib.metadata.version("mcp")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
             f"mcp=={version}", "-d", tmp],
            check=True,
        )  # fmt: skip
        sdist = next(Path(tmp).glob("mcp-*.tar.gz"))
        with tarfile.open(sdist) as archive:
            members = [m for m in archive.getmembers() if "/examples/servers/simple-auth/" in m.name]
            archive.extractall(tmp, members=members, filter="data")
        example = next(Path(tmp).glob("mcp-*/examples/servers/simple-auth"))
        command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
        if target is not None:
            command += ["--target", str(target)]
        subprocess.run([*command, str(example)], check=True)


def example_path() -> str | None:
    """A ``PYTHONPATH`` entry that makes ``mcp_simple_auth`` importable, or ``None`` when it already is."""
    if importlib.util.find_spec("mcp_simple_auth") is not None:
        return None
    cache = _cache_dir()
    if not (cache / "mcp_simple_auth").is_dir():
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache.parent) as building:
            _build_example(Path(building) / "site")
            with contextlib.suppress(OSError):  # another run built it meanwhile
                (Path(building) / "site").rename(cache)
    return str(cache)


@dataclass
class OAuthServers:
    """The example's authorization server and resource server, running on 127.0.0.1."""

    as_url: str
    rs_url: str
    """The resource server's MCP endpoint (``.../mcp``)."""

    def stats(self) -> dict[str, int]:
        """What the authorization server did: ``registrations``, ``authorization_code``, ``refresh_token``."""
        return dict(httpx2.get(f"{self.as_url}/test/stats").json())

    def expire_access_tokens(self) -> None:
        httpx2.post(f"{self.as_url}/test/expire").raise_for_status()

    def revoke_refresh_tokens(self) -> None:
        httpx2.post(f"{self.as_url}/test/revoke").raise_for_status()


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCHER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "READY":
                ready.set()
            else:
                lines.append(line)
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(START_BOUND) or proc.poll() is not None:
        proc.kill()
        raise RuntimeError(f"oauth test server {args[0]} did not start:\n{''.join(lines[-30:])}")
    return proc


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def running_oauth_servers() -> Iterator[OAuthServers]:
    """Start the example AS and RS (each a subprocess on 127.0.0.1); stop both on exit."""
    env = dict(os.environ)
    extra = example_path()
    if extra is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra, str(ROOT), env.get("PYTHONPATH")) if p)
    as_port, rs_port = _free_port(), _free_port()
    as_url = f"http://127.0.0.1:{as_port}"
    procs = [_start(["as", str(as_port)], env)]
    try:
        procs.append(_start(["rs", str(rs_port), as_url], env))
        yield OAuthServers(as_url, f"http://127.0.0.1:{rs_port}/mcp")
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class _Form(HTMLParser):
    """The first form of a page: its action and the values of its inputs, as a browser would submit them."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = values.get("action") or ""
        elif tag == "input" and values.get("name"):
            self.fields[str(values["name"])] = values.get("value") or ""


def sign_in_as_person(authorization_url: str) -> str:
    """Follow ``authorization_url`` to the login form, submit it, and return where the browser is sent then."""
    with httpx2.Client(follow_redirects=False) as browser:
        response = browser.get(authorization_url)
        while response.status_code in (301, 302, 303, 307, 308) and "/login" not in str(response.url.path):
            response = browser.get(urljoin(str(response.url), response.headers["location"]))
        assert response.status_code == 200, (
            f"no login page: HTTP {response.status_code} {response.text[:200]}"
        )
        form = _Form()
        form.feed(response.text)
        assert form.action is not None, "the login page has no form"
        submitted = browser.post(urljoin(str(response.url), form.action), data=form.fields)
        assert submitted.status_code in (302, 303), f"login failed: HTTP {submitted.status_code}"
        return str(submitted.headers["location"])


if __name__ == "__main__":
    if sys.argv[1:] == ["install"]:
        if importlib.util.find_spec("mcp_simple_auth") is None:
            _build_example(None)
        print("mcp_simple_auth:", importlib.util.find_spec("mcp_simple_auth") is not None)
    else:
        raise SystemExit("usage: python tests/support/oauth_support.py install")
