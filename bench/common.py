"""Shared benchmark machinery: interleaved side-by-side timing, medians and spread, servers, process counters.

Every comparison is measured in one process and one run, in interleaved blocks (each block runs every variant once,
in a rotating order), so drift on a shared machine hits all variants alike. Ratios are taken per block against the
baseline, then summarised by their median and interquartile range.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SERVERS_DIR = BENCH_DIR / "servers"
PY = sys.executable
ERAS = ("modern", "legacy")

DEMO_ARGS = ["-m", "langgraph_mcp.examples.demo_server"]
CATALOG_SERVER = str(SERVERS_DIR / "catalog_server.py")


def demo_stdio(mode: str, **options: Any) -> dict[str, Any]:
    """A ``McpServers`` entry for the bundled demo server over stdio in ``mode``."""
    return {"command": PY, "args": [*DEMO_ARGS, "stdio"], "mode": mode, **options}


def era_mode(era: str) -> str:
    """The ``mcp.Client`` mode that negotiates ``era`` (``modern`` probes via ``auto``)."""
    return "auto" if era == "modern" else "legacy"


# ----------------------------------------------------------------------------------------------- statistics


def quantile(values: list[float], q: float) -> float:
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


@dataclass
class Summary:
    median: float
    p25: float
    p75: float
    n: int

    @classmethod
    def of(cls, values: list[float]) -> Summary:
        return cls(statistics.median(values), quantile(values, 0.25), quantile(values, 0.75), len(values))

    def as_dict(self) -> dict[str, float]:
        return {"median": self.median, "p25": self.p25, "p75": self.p75, "n": self.n}

    def ms(self) -> str:
        return f"{self.median * 1e3:.3f} ms [{self.p25 * 1e3:.3f}–{self.p75 * 1e3:.3f}]"

    def ratio(self) -> str:
        return f"{self.median:.2f}× [{self.p25:.2f}–{self.p75:.2f}]"


@dataclass
class Comparison:
    """Per-unit times of several variants from interleaved blocks, and their per-block ratios to a baseline."""

    baseline: str
    times: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)
    """This process's CPU time per unit (``time.process_time``), for variants timed here."""

    def ratios(self, name: str) -> list[float]:
        return [t / b for t, b in zip(self.times[name], self.times[self.baseline], strict=True)]

    def cpu_ratios(self, name: str) -> list[float]:
        mine, base = self.cpu.get(name), self.cpu.get(self.baseline)
        if not mine or not base:
            return []
        return [t / b for t, b in zip(mine, base, strict=True) if b > 0]

    def rows(self) -> list[list[str]]:
        out = []
        for name, values in self.times.items():
            t = Summary.of(values)
            r = Summary.of(self.ratios(name))
            c = self.cpu_ratios(name)
            out.append([name, t.ms(), r.ratio(), Summary.of(c).ratio() if c else ""])
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "variants": {
                name: {
                    "seconds": Summary.of(v).as_dict(),
                    "ratio": Summary.of(self.ratios(name)).as_dict(),
                    **(
                        {"cpu_ratio": Summary.of(self.cpu_ratios(name)).as_dict()}
                        if self.cpu_ratios(name)
                        else {}
                    ),
                }
                for name, v in self.times.items()
            },
        }


async def interleave(
    variants: dict[str, Callable[[int], Awaitable[float | None]]],
    *,
    blocks: int,
    per_block: int,
    baseline: str,
    warmup: int = 1,
    counts: dict[str, int] | None = None,
) -> Comparison:
    """Run ``variants[name](n)`` once per block each, rotating the order; record time per unit.

    ``n`` is ``per_block`` unless ``counts`` names another (slow variants). A variant that returns a float timed
    itself (a peer process: its own clock, no pipe round trip); otherwise the call is timed here.
    """
    names = list(variants)
    size = {name: (counts or {}).get(name, per_block) for name in names}
    for name in names:
        for _ in range(warmup):
            await variants[name](min(size[name], 2))
    result = Comparison(baseline, {name: [] for name in names}, {name: [] for name in names})
    for block in range(blocks):
        order = names[block % len(names) :] + names[: block % len(names)]
        for name in order:
            began, cpu = time.perf_counter(), time.process_time()
            own = await variants[name](size[name])
            elapsed = own if isinstance(own, float) else time.perf_counter() - began
            result.times[name].append(elapsed / size[name])
            if not isinstance(own, float):  # a peer's CPU is not this process's
                result.cpu[name].append((time.process_time() - cpu) / size[name])
    return result


class FullCollections:
    """Counts this interpreter's full (generation-2) garbage collections while entered.

    One scans the whole heap (~100 ms for the ~165k objects of a process that imported langgraph), so a timed run
    it lands in is ~100 ms slower for reasons that have nothing to do with what is measured; the count says which.
    """

    def __init__(self) -> None:
        self.count = 0

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            self.count += 1

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._on_collection)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._on_collection)


# ----------------------------------------------------------------------------------------------- processes


def rss_bytes() -> int:
    return int(psutil.Process().memory_info().rss)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def child_processes() -> int:
    return len(psutil.Process().children(recursive=True))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def http_spec(url: str, mode: str, **options: Any) -> dict[str, Any]:
    return {"transport": "streamable_http", "url": url, "mode": mode, **options}


@contextmanager
def http_demo_server(*extra: str) -> Iterator[str]:
    """The demo server over streamable HTTP in its own process on 127.0.0.1; yields its ``/mcp`` URL."""
    with http_server_process(lambda port: [*DEMO_ARGS, "http", str(port), *extra]) as url:
        yield url


@contextmanager
def http_server_process(args_for: Callable[[int], list[str]]) -> Iterator[str]:
    """``python <args_for(port)>``: an HTTP MCP server in its own process on 127.0.0.1; yields its ``/mcp`` URL."""
    port = free_port()
    proc = subprocess.Popen(
        [PY, *args_for(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"demo HTTP server did not start (exit code {proc.poll()})") from None
                time.sleep(0.05)  # waiting for a port to open in another process: nothing to await on
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ----------------------------------------------------------------------------------------------- report


@dataclass
class Section:
    """One part of the report: a markdown table plus the raw numbers for the JSON report."""

    key: str
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def markdown(self) -> str:
        lines = [f"## {self.title}", ""]
        lines.append("| " + " | ".join(self.header) + " |")
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in self.rows)
        if self.notes:
            lines.append("")
            lines.extend(f"- {note}" for note in self.notes)
        return "\n".join(lines) + "\n"


def main(doc: str, measure: Callable[[bool], Awaitable[Section]]) -> None:
    """Command line of one benchmark: ``[--quick] [--json PATH]``; prints the markdown section."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument("--json", type=Path, help="also write the section (markdown and numbers) here")
    args = parser.parse_args()
    section = asyncio.run(measure(args.quick))  # type: ignore[arg-type]
    print(section.markdown())
    if args.json is not None:
        payload = {
            "key": section.key,
            "title": section.title,
            "markdown": section.markdown(),
            "data": section.data,
        }
        args.json.write_text(json.dumps(payload, indent=2, default=str))
