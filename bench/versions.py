"""Before → after: two checkouts of the package timed side by side on the same public graphs (P1 and P3).

``python -m bench.versions --before REF [--after REF] [--blocks 200]`` checks ``REF`` out into a temporary git
worktree (``--after`` defaults to this checkout as it is, uncommitted changes included), starts peer processes (three per
checkout and era by default, taking blocks in turn) (``bench/peers/package_side.py`` with that checkout first on ``PYTHONPATH``, the same interpreter
and dependencies), and runs the variants in interleaved blocks: each block runs every variant once on each side, in a
rotating order, so the machine's drift hits both alike. Each side times its own runs (no pipe round trip in the
figure). The table gives each side's per-call median with its interquartile range, and the per-block ratio
after ÷ before as a median [p25–p75]: below 1.00 the after side is faster. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.common import ERAS, REPO, Comparison, Summary, interleave
from bench.peers import PEERS_DIR, Worker

SIDES = ("before", "after")


async def start(checkout: Path, era: str) -> Worker:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(checkout)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PEERS_DIR / "package_side.py"),
        era,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=str(checkout),
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 120)
    if not line.startswith(b"{"):
        err = (await proc.stderr.read()).decode(errors="replace")
        raise RuntimeError(f"the {checkout} side did not start: {err[-600:]}")
    worker = Worker(proc, json.loads(line))
    found = Path(worker.hello["package"]).resolve()
    if found.parent != checkout.resolve():  # the side must measure the checkout it was given
        await worker.stop()
        raise RuntimeError(f"the side for {checkout} imported the package from {found}")
    return worker


def worktree(ref: str, into: Path) -> Path:
    path = into / ref.replace("/", "_")
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(path), ref], check=True)
    return path


def rotating(workers: list[Worker], name: str) -> Callable[[int], Awaitable[float]]:
    """``name`` run by each of ``workers`` in turn, block after block: a process's own luck (its heap, its timer
    phase against the server's; one was seen to take ~123 ms or ~140 ms for the same fan-out, whichever checkout
    it ran) is spread over both sides instead of landing on one."""
    turn = itertools.count()

    async def go(n: int) -> float:
        return await workers[next(turn) % len(workers)].run(name, n)

    return go


async def measure(
    checkouts: dict[str, Path],
    blocks: int,
    per_block: int,
    eras: tuple[str, ...],
    only: str | None,
    processes: int,
) -> list[list[str]]:
    rows: list[list[str]] = []
    for era in eras:
        workers = {
            side: [await start(path, era) for _ in range(processes)] for side, path in checkouts.items()
        }
        try:
            names = [n for n in workers["before"][0].hello["variants"] if only is None or only in n]
            for name in names:
                fan = "×" in name
                result: Comparison = await interleave(
                    {side: rotating(workers[side], name) for side in SIDES},
                    blocks=blocks,
                    per_block=1 if fan else per_block,
                    baseline="before",
                )
                before, after = (Summary.of(result.times[side]) for side in SIDES)
                ratio = Summary.of(result.ratios("after"))
                rows.append([era, name, before.ms(), after.ms(), ratio.ratio()])
                print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
        finally:
            for side_workers in workers.values():
                for worker in side_workers:
                    await worker.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", required=True, help="a git ref: the package before the change")
    parser.add_argument("--after", help="a git ref (default: this checkout as it is)")
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--per-block", type=int, default=10, help="runs per block of a one-call variant")
    parser.add_argument("--era", choices=ERAS, help="one era only (default: both)")
    parser.add_argument("--only", help="only the variants whose name contains this")
    parser.add_argument(
        "--processes", type=int, default=3, help="peer processes per side, taking blocks in turn"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-versions-") as tmp:
        made: list[Path] = []
        try:
            checkouts = {"before": worktree(args.before, Path(tmp))}
            made.append(checkouts["before"])
            if args.after:
                checkouts["after"] = worktree(args.after, Path(tmp))
                made.append(checkouts["after"])
            else:
                checkouts["after"] = REPO
            eras = (args.era,) if args.era else ERAS
            rows = asyncio.run(
                measure(checkouts, args.blocks, args.per_block, eras, args.only, args.processes)
            )
        finally:
            for path in made:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], check=False
                )
    after = args.after or "this checkout"
    print(
        f"before = {args.before}, after = {after}; {args.blocks} interleaved blocks (one-call variants: "
        f"{args.per_block} runs a block); per run: median [p25–p75]; ratio per block, then median [p25–p75]\n"
    )
    print("| era | variant | before | after | after ÷ before |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
