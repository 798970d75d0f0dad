"""A throwaway PostgreSQL cluster on a free 127.0.0.1 port, for the many-workers test tier.

Used two ways, one implementation:

* by ``.ci/run`` (``python tests/support/pg_cluster.py start DIR`` prints a DSN, ``... stop DIR`` stops it and removes
  ``DIR``), which exports the DSN as ``LANGGRAPH_MCP_TEST_PG_DSN`` for the whole test run;
* by the ``pg_dsn`` fixture in ``tests/scale/test_multiworker.py`` when no DSN is given and the server binaries exist
  (Debian's ``postgresql`` package: ``/usr/lib/postgresql/<version>/bin``).

PostgreSQL refuses to run as root, so under root the cluster belongs to the ``postgres`` user (created by the
Debian package) or ``nobody``; the data directory lives in a fresh directory under ``/tmp`` owned by that user.
The server listens on 127.0.0.1 only, trusts local connections (it is a test cluster on loopback) and runs
with ``fsync=off``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

DSN_ENV = "LANGGRAPH_MCP_TEST_PG_DSN"
"""A DSN to an already running server: the tests use it instead of starting their own cluster."""
REQUIRE_ENV = "LANGGRAPH_MCP_REQUIRE_PG"
"""Set to ``1`` (CI does) to make a missing or unstartable PostgreSQL fail the tier instead of skipping it."""


class PgUnavailable(RuntimeError):
    """PostgreSQL cannot be started here (the message says why)."""


def pg_bin_dir() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl`` (newest Debian version first, then ``PATH``)."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    for candidate in versions:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl:
        return Path(initdb).resolve().parent
    raise PgUnavailable(
        "PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH): "
        "install the Debian package `postgresql`, or set " + DSN_ENV
    )


def _run_as() -> str | None:
    """The user to run the server as: None when we are not root, else ``postgres`` or ``nobody``."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise PgUnavailable(
        "running as root and neither a `postgres` nor a `nobody` user exists to run PostgreSQL"
    )


def _command(user: str | None, argv: list[str]) -> list[str]:
    return argv if user is None else ["runuser", "-u", user, "--", *argv]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(root: Path | None = None) -> tuple[Path, str]:
    """Create and start a cluster; returns its directory (pass it to :func:`stop`) and a DSN to it.

    Raises :class:`PgUnavailable` with the reason when it cannot.
    """
    bin_dir = pg_bin_dir()
    user = _run_as()
    root = Path(tempfile.mkdtemp(prefix="lgmcp-pg-")) if root is None else root
    root.mkdir(parents=True, exist_ok=True)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data, log = root / "data", root / "server.log"
    init = subprocess.run(
        _command(
            user,
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise PgUnavailable(
            f"initdb failed ({init.returncode}): {(init.stderr or init.stdout).strip()[-800:]}"
        )
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off -c max_connections=200"
    started = subprocess.run(
        _command(
            user, [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start"]
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if started.returncode != 0:
        tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise PgUnavailable(f"pg_ctl start failed ({started.returncode}): {started.stderr.strip()} {tail}")
    (root / "port").write_text(str(port))
    return root, f"postgresql://postgres@127.0.0.1:{port}/postgres"


def stop(root: Path) -> None:
    """Stop the cluster started in ``root`` (waits for it) and remove the directory."""
    data = root / "data"
    if (data / "postmaster.pid").exists():
        subprocess.run(
            _command(_run_as(), [str(pg_bin_dir() / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
            timeout=120,
            check=False,
        )
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    usage = "usage: python tests/support/pg_cluster.py start|stop DIR"
    if len(sys.argv) != 3 or sys.argv[1] not in {"start", "stop"}:
        sys.exit(usage)
    if sys.argv[1] == "start":
        try:
            _, dsn = start(Path(sys.argv[2]))
        except PgUnavailable as exc:
            sys.exit(f"pg_cluster: {exc}")
        print(dsn)
    else:
        stop(Path(sys.argv[2]))
