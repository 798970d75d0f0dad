"""Argument parsing, logging, and turning failures into one clear message and an exit code.

Exit codes:

* ``0`` — done.
* ``1`` — the tool call ended with an error result (including a call a human rejected), a server could not be
  reached (``tools``: a server failed to list), or something unexpected failed.
* ``2`` — bad input: arguments, server config, policy, answers file, a ``--db`` file that does not exist, unknown
  tool or thread; ``tools --strict`` when a server failed; ``policy check`` when a self-test failed.
* ``3`` — the thread is paused waiting for a human (``--no-input``, Ctrl-C or end of input at a prompt;
  ``pending`` on a thread that waits); continue it with ``langgraph-mcp resume --thread ID``.
* ``130`` — Ctrl-C while the graph was running.
* ``141`` — standard output was closed early (``langgraph-mcp tools | head``): nothing more is written, nothing
  goes to stderr, and the status is the one a shell gives a command killed by SIGPIPE (128 + 13), like
  ``yes | head -1``; servers are still closed on the way out. (Python's own default would be a traceback, or 120
  when only the final flush fails; rich's is a quiet 1, which reads as a failure of the command.)

Logging is quiet by default (errors only; a stdio server's stderr goes to the ``langgraph_mcp.server.<name>``
logger at INFO, so it never reaches the terminal); ``-v`` shows INFO, ``-vv`` DEBUG.

Input that can be told wrong without starting anything (a server config's JSON and keys, ``--args``, an answers
file's JSON, a missing ``--db``) is checked before LangGraph and the MCP SDK are imported
(:mod:`langgraph_mcp.cli.inputs`), so a typo is reported at once.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import select
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

__all__ = ["build_parser", "run"]

_EPILOG = """exit codes: 0 done; 1 tool error, unreachable server (tools: a server failed) or unexpected
failure; 2 bad input (arguments, config, policy, answers file, missing --db file, unknown tool or thread; tools
--strict with a failed server; policy check with a failing self-test); 3 the thread waits for a human (pending:
it waits; continue it with `langgraph-mcp resume --thread ID`); 130 Ctrl-C while running; 141 stdout closed
early (| head)."""

Command = Callable[[argparse.Namespace, Console, Console], int]


def _add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help='server config JSON ({"mcpServers": {...}}); default: the bundled demo server over stdio',
    )
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="approval policy file, .toml or JSON (default: ask about destructive tools)",
    )


def _add_configurable(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--configurable",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a run config value (config['configurable'][KEY]), e.g. a token for ${configurable:KEY} in the "
        "server config's headers; repeatable. Not stored with the thread: give it again on resume",
    )


def _parse_configurable(pairs: Sequence[str]) -> dict[str, str]:
    from langgraph_mcp.errors import CliError

    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--configurable needs KEY=VALUE, got {pair!r}")
        values[key.strip()] = value
    return values


def _local_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "local"


def _add_db(
    parser: argparse.ArgumentParser, default: str = "the per-user data dir, or $LANGGRAPH_MCP_DB"
) -> None:
    parser.add_argument("--db", metavar="PATH", help=f"SQLite checkpoint database (default: {default})")


def _command(name: str) -> Command:
    """The function behind a subcommand, imported only when it runs (``--help`` stays fast)."""
    if name == "demo":
        from langgraph_mcp.cli.demo import cmd_demo

        return cmd_demo
    if name in ("approvals", "audit"):
        from langgraph_mcp.cli import approvals

        store_command: Command = getattr(approvals, f"cmd_{name}")
        return store_command
    if name.startswith("policy_"):
        from langgraph_mcp.cli import policy

        policy_command: Command = getattr(policy, f"cmd_{name}")
        return policy_command
    from langgraph_mcp.cli import commands

    func: Command = getattr(commands, f"cmd_{name}")
    return func


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:  # what langgraph_mcp.__version__ says (the CLI does not import the package's facade)
        return version("langgraph-mcp")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langgraph-mcp",
        description="MCP servers in LangGraph graphs, with humans in control.",
        epilog=_EPILOG,
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="show logs (-v info, -vv debug)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    tools = sub.add_parser(
        "tools", help="list each server's tools, hints and approval verdicts", epilog=_EPILOG
    )
    _add_config(tools)
    tools.add_argument("--strict", action="store_true", help="exit 2 (not 1) if any server failed")
    _add_configurable(tools)
    tools.set_defaults(command_name="tools")

    call = sub.add_parser(
        "call", help="run one tool call through the approval gate and the tool node", epilog=_EPILOG
    )
    call.add_argument("tool", metavar="PUBLISHED_NAME", help="the tool's published name, e.g. demo_book_trip")
    call.add_argument("--args", default="{}", metavar="JSON", help="arguments as a JSON object (default: {})")
    _add_config(call)
    call.add_argument("--thread", metavar="ID", help="thread id (default: a new call-XXXXXXXX)")
    _add_db(call)
    call.add_argument(
        "--no-input", action="store_true", help="never prompt: leave the thread pending instead"
    )
    _add_configurable(call)
    call.set_defaults(command_name="call")

    pending = sub.add_parser(
        "pending", help="show what a thread waits for (exit 3 if it waits, 0 if not)", epilog=_EPILOG
    )
    pending.add_argument("--thread", required=True, metavar="ID")
    _add_db(pending)
    pending.add_argument("--config", metavar="FILE", help="server config (default: the thread's own)")
    pending.add_argument("--json", action="store_true", help="print the pending interrupts as JSON")
    _add_configurable(pending)
    pending.set_defaults(command_name="pending")

    resume = sub.add_parser("resume", help="answer what a thread waits for and continue it", epilog=_EPILOG)
    resume.add_argument("--thread", required=True, metavar="ID")
    resume.add_argument(
        "--answers",
        metavar="FILE",
        help='JSON {"<tool_call_id or published name>": <decision or answers>, ...}; the rest is asked',
    )
    _add_db(resume)
    resume.add_argument("--config", metavar="FILE", help="server config (default: the thread's own)")
    resume.add_argument(
        "--no-input", action="store_true", help="never prompt: leave what is unanswered pending"
    )
    _add_configurable(resume)
    resume.set_defaults(command_name="resume")

    demo = sub.add_parser(
        "demo", help="an agent turn over the bundled server: approvals, questions, transcript", epilog=_EPILOG
    )
    demo.add_argument(
        "--yes", action="store_true", help="approve everything, fill forms with defaults/samples"
    )
    demo.add_argument(
        "--answers", metavar="FILE", help="answers JSON keyed by tool_call_id or published name"
    )
    demo.add_argument("--model", metavar="PROVIDER:MODEL", help="a real chat model via init_chat_model")
    _add_db(demo, "a temporary database, deleted at the end unless the thread is left waiting")
    demo.add_argument(
        "--no-input", action="store_true", help="never prompt: leave the thread pending instead"
    )
    _add_configurable(demo)
    demo.set_defaults(command_name="demo")
    _add_policy(sub)

    auth = sub.add_parser(
        "auth",
        help="OAuth sign-ins kept in the CLI's store: list whose tokens are there, revoke them",
        epilog=_EPILOG,
    )
    auth.add_argument(
        "action", choices=["list", "revoke"], help="list (never shows tokens) or revoke (delete)"
    )
    auth.add_argument("--server", required=True, metavar="NAME", help="the server's name in the config")
    auth.add_argument(
        "--principal", metavar="ID", help="one principal (default: every principal of the server)"
    )
    _add_db(auth)
    auth.set_defaults(command_name="auth")
    _add_approvals(sub)
    return parser


def _add_approvals(sub: Any) -> None:
    """``approvals list|revoke`` and ``audit --thread ID``."""
    store_help = (
        "the LangGraph store: a SQLite file or a postgresql:// DSN (default: $LANGGRAPH_MCP_STORE, else the "
        "CLI's database)"
    )
    approvals = sub.add_parser(
        "approvals", help="list or revoke remembered approval decisions (a LangGraph store)", epilog=_EPILOG
    )
    approvals.add_argument("action", choices=["list", "revoke"])
    who = approvals.add_mutually_exclusive_group()
    who.add_argument("--principal", metavar="ID", help="one principal's remembered decisions")
    who.add_argument("--thread", metavar="ID", help="one thread's remembered decisions")
    who.add_argument("--all", action="store_true", help="revoke: every remembered decision")
    approvals.add_argument("--server", metavar="NAME", help="only decisions about this server's tools")
    approvals.add_argument(
        "--tool",
        metavar="NAME",
        help="only decisions about this tool (its published name, e.g. demo_delete_file, or the server's own name)",
    )
    approvals.add_argument(
        "--key", metavar="KEY", help="revoke: only this entry (<server>/<tool>[/<digest>])"
    )
    approvals.add_argument("--json", action="store_true", help="print JSON")
    approvals.add_argument("--store", metavar="DSN", help=store_help)
    _add_db(approvals)
    approvals.set_defaults(command_name="approvals")

    audit = sub.add_parser(
        "audit", help="print the decision record of a thread (a store audit sink's records)", epilog=_EPILOG
    )
    audit.add_argument("--thread", required=True, metavar="ID", help="the thread id")
    audit.add_argument("--json", action="store_true", help="print the records as JSON")
    audit.add_argument("--store", metavar="DSN", help=store_help)
    _add_db(audit)
    audit.set_defaults(command_name="audit")


def _add_policy(sub: Any) -> None:
    """``policy check POLICY [--config FILE]`` and ``policy explain POLICY --config FILE PUBLISHED_NAME``."""
    policy = sub.add_parser(
        "policy", help="run a policy file's self-tests, or explain the verdict for one call", epilog=_EPILOG
    )
    actions = policy.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", help="load POLICY and run its [[tests]]; exit 2 naming a failing one", epilog=_EPILOG
    )
    check.add_argument("policy", metavar="POLICY", help="policy file (.toml; any other extension: JSON)")
    check.add_argument(
        "--config", metavar="FILE", help="run the tests against these servers' listings, and check them"
    )
    check.set_defaults(command_name="policy_check")
    explain = actions.add_parser(
        "explain",
        help="the verdict for one call, its rule and reason, and the rules that lost",
        epilog=_EPILOG,
    )
    explain.add_argument("policy", metavar="POLICY", help="policy file (.toml; any other extension: JSON)")
    explain.add_argument(
        "--config", metavar="FILE", required=True, help='server config JSON ({"mcpServers": ...})'
    )
    explain.add_argument(
        "tool", metavar="PUBLISHED_NAME", help="the tool's published name, e.g. demo_delete_file"
    )
    explain.add_argument(
        "--args", default="{}", metavar="JSON", help="arguments as a JSON object (default: {})"
    )
    explain.add_argument(
        "--at",
        metavar="TIME",
        help="when the call is made, ISO 8601 (without a zone: UTC), for rules that read the clock (default: now)",
    )
    _add_configurable(explain)
    explain.set_defaults(command_name="policy_explain")


@contextlib.contextmanager
def _configured_logging(verbosity: int) -> Iterator[None]:
    """Errors only by default; ``-v``: this package at INFO (server stderr included); ``-vv``: DEBUG. Undone on
    the way out, so a command run in-process (:func:`run`) leaves the caller's logging and warnings as they were."""
    root = logging.getLogger()
    package = logging.getLogger("langgraph_mcp")
    handlers, root_level, package_level = root.handlers[:], root.level, package.level
    level = logging.ERROR if verbosity <= 0 else logging.WARNING if verbosity == 1 else logging.INFO
    with warnings.catch_warnings():
        logging.basicConfig(
            level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s", force=True
        )
        if verbosity > 0:
            package.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)
        else:
            warnings.simplefilter("ignore")
        try:
            yield
        finally:
            for handler in root.handlers[:]:
                if handler not in handlers:
                    root.removeHandler(handler)
            for handler in handlers:
                if handler not in root.handlers:
                    root.addHandler(handler)
            root.setLevel(root_level)
            package.setLevel(package_level)


class _StdoutClosed(BaseException):
    """Standard output is gone; a BaseException so no ``except Exception`` on the way out reports it as a failure
    (``finally`` blocks and context managers still close the servers)."""


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:  # rich's default: a quiet SystemExit(1)
        self.quiet = True
        raise _StdoutClosed


def _stdout_is_closed(*, poll: bool = False) -> bool:
    """Whether writing to stdout failed: flushing it fails, or (``poll``: after argparse, which swallows its own
    write errors) it is a pipe nobody reads any more."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError):
        return False
    if not poll or not hasattr(select, "poll"):
        return False
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit code."""
    try:
        try:
            code = _run(argv)
        except SystemExit:  # argparse's --help and usage errors: their text may not have reached stdout
            if _stdout_is_closed(poll=True):
                raise _StdoutClosed from None
            raise
        if _stdout_is_closed():  # what is still buffered could not be written
            raise _StdoutClosed
        return code
    except (_StdoutClosed, BrokenPipeError) as exc:
        if isinstance(exc, BrokenPipeError) and not _stdout_is_closed():
            raise  # some other pipe (a server's, say): not ours to hide
        try:  # the interpreter flushes stdout once more on exit: let that go nowhere, quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        from langgraph_mcp.cli.exits import EXIT_BROKEN_PIPE

        return EXIT_BROKEN_PIPE


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with _configured_logging(args.verbose):
        return _run_command(args)


def _run_command(args: argparse.Namespace) -> int:
    from langgraph_mcp.cli.inputs import check_inputs
    from langgraph_mcp.errors import CliError

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:  # before the heavy imports below: a typo is reported at once
        check_inputs(args)
    except CliError as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return exc.code
    from langgraph_mcp.cli.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
    from langgraph_mcp.errors import ConfigError, LangGraphMcpError, ServerConnectionError

    console = _StdoutConsole(highlight=False)
    try:
        configurable = _parse_configurable(getattr(args, "configurable", []))
        if configurable.get("user_id") is None and configurable.get("langgraph_auth_user_id") is None:
            # Whose OAuth sign-ins this command uses: you, unless --configurable user_id=... says otherwise.
            configurable["user_id"] = _local_user()
        # Every run and every lookup of this process uses these values (e.g. per-user header tokens).
        from langgraph_mcp.credentials import RUN_CONFIG

        token = RUN_CONFIG.set({"configurable": configurable})
        try:
            return _command(args.command_name)(args, console, err)
        finally:
            RUN_CONFIG.reset(token)
    except CliError as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return exc.code
    except ConfigError as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return EXIT_USAGE
    except ServerConnectionError as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return EXIT_FAILED
    except LangGraphMcpError as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return EXIT_FAILED
    except KeyboardInterrupt:
        err.print(Text("interrupted", style="yellow"))
        return EXIT_INTERRUPTED
