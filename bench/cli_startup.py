"""How long ``langgraph-mcp`` takes to say something simple: ``--help`` and a typo, beside ``python -c pass``.

    python bench/cli_startup.py            # 9 rounds
    python bench/cli_startup.py --rounds 15

Each round runs every command once, in a fresh process, in turn (side by side, so load on the machine hits them
alike); the table gives the median wall time and the ratio to ``python -c pass``. Target (issue 22): ``--help``
and a JSON typo within 0.5 s. The commands:

* ``--help`` — argparse only;
* a JSON typo — ``tools --config FILE`` where FILE is not valid JSON;
* a key typo — ``tools --config FILE`` with ``"comand"`` for ``"command"`` (the config is validated, with a
  "did you mean"), which loads the config models but not LangGraph or the MCP SDK;
* a missing ``--db`` — ``pending --thread x --db MISSING``.

Every command must exit 2 (the typos) or 0 (``--help``); a wrong exit code fails the run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "broken.json").write_text('{"mcpServers": {"demo": {"command": "x"}')
        (root / "typo.json").write_text('{"mcpServers": {"demo": {"comand": "x"}}}')
        cli = [sys.executable, "-m", "langgraph_mcp"]
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], 0),
            "--help": ([*cli, "--help"], 0),
            "JSON typo (tools --config)": ([*cli, "tools", "--config", str(root / "broken.json")], 2),
            "key typo 'comand' (tools --config)": ([*cli, "tools", "--config", str(root / "typo.json")], 2),
            "missing --db (pending)": (
                [*cli, "pending", "--thread", "x", "--db", str(root / "no.sqlite")],
                2,
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(opts.rounds):
            for name, (argv, code) in commands.items():
                started = time.perf_counter()
                result = subprocess.run(argv, capture_output=True, check=False, cwd=tmp)
                times[name].append(time.perf_counter() - started)
                if result.returncode != code:
                    raise SystemExit(f"{name}: exit {result.returncode}, expected {code}\n{result.stderr!r}")
    base = statistics.median(times["python -c pass"])
    print(f"| command | median s [min-max] | x python -c pass |  ({opts.rounds} rounds)")
    print("|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.3f} [{min(values):.3f}-{max(values):.3f}] | {median / base:.1f}x |")


if __name__ == "__main__":
    main()
