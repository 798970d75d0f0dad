"""Run the whole benchmark suite and write ``bench/report.md`` and ``bench/report.json``.

Usage: ``python bench/run_all.py [--quick] [--only p1,p4] [--out DIR]``. Each benchmark runs in its own process (so
memory and fd readings of one don't include another's), one after another; inside each, variants are measured side
by side.

``--quick`` is a smoke run (fewer repetitions and threads): its report goes to a fresh temporary directory unless
``--out`` names one, so it never replaces the measured ``bench/report.md``. The runner exits with status 1 when any
benchmark failed (its section in the report says how), so CI (``.ci/run`` runs ``--quick``) sees a benchmark rot.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
MODULES = [
    "p1_per_call",
    "p1_targets",
    "p2_bridges",
    "p3_fanout",
    "p4_catalog",
    "p5_endurance",
    "p6_resume",
    "p8_scale",
    "p9_tasks",
    "p10_policy",
    "p11_cold_start",
    "p12_memory",
    "p13_workers",
]


def run_module(module: str, quick: bool, out: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", f"bench.{module}", "--json", str(out), *(["--quick"] if quick else [])]
    began = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    seconds = time.monotonic() - began
    if proc.returncode != 0 or not out.exists():
        tail = (proc.stderr or proc.stdout).strip()[-1500:]
        return {
            "key": module,
            "title": module,
            "markdown": f"## {module}\n\nFAILED (exit {proc.returncode}):\n\n```\n{tail}\n```\n",
            "data": {"error": tail},
            "seconds": seconds,
            "failed": True,
        }
    section: dict[str, Any] = json.loads(out.read_text())
    section["seconds"] = seconds
    return section


def median(entry: dict[str, Any] | None, *path: str) -> float | None:
    node: Any = entry
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return float(node) if isinstance(node, int | float) else None


def targets(sections: dict[str, dict[str, Any]]) -> list[list[str]]:
    """The issue's three targets (and P8's memory target), read from the sections' numbers."""
    rows: list[list[str]] = []
    p1 = sections.get("p1", {}).get("data", {})
    for era in ("modern", "legacy"):
        cell = _get(p1, era, "vs_raw", "variants", "servers.call_tool") or {}
        ratio = cell.get("ratio")
        if ratio:
            ok = ratio["median"] <= 1.05
            spread = f"[{ratio['p25']:.2f}–{ratio['p75']:.2f}]"
            if "cpu_ratio" in cell:
                spread += f"; client CPU {_ratio(cell['cpu_ratio'])}"
            rows.append(
                [
                    f"`servers.call_tool` / raw SDK call, stdio, {era}",
                    "≤ 1.05×",
                    f"{ratio['median']:.2f}× {spread}",
                    ok_text(ok),
                ]
            )
    p3 = sections.get("p3", {}).get("data", {})
    for transport in ("stdio", "http"):
        cell = p3.get(f"legacy/{transport}", {}).get("servers.call_tool ×32", {}).get("ratio")
        if cell:
            spread = f"[{cell['p25']:.2f}–{cell['p75']:.2f}]"
            rows.append(
                [
                    f"32 parallel 100 ms calls / one call, legacy {transport}",
                    "≤ 1.3×",
                    f"{cell['median']:.2f}× {spread}",
                    ok_text(cell["median"] <= 1.3),
                ]
            )
    for era in ("modern", "legacy"):
        for transport in ("stdio", "http"):
            cell = _get(p3, f"{era}/{transport}", "graph: Send fan-out ×32", "vs_hand_written_send")
            if cell:
                rows.append(
                    [
                        f"32-call Send fan-out (`route_tool_calls` + `McpToolNode`) / hand-written Send fan-out, "
                        f"{era} {transport}",
                        "≤ 1.03×",
                        _ratio(cell),
                        ok_text(cell["median"] <= 1.03),
                    ]
                )
    p1_hand = sections.get("p1", {}).get("data", {})
    cell = _get(p1_hand, "legacy", "vs_hand_written", "variants", "graph: McpToolNode", "ratio")
    if cell:
        rows.append(
            [
                "graph with `McpToolNode` / hand-written node on the raw session, stdio, legacy",
                "≤ 1.03×",
                _ratio(cell),
                ok_text(cell["median"] <= 1.03),
            ]
        )
    p11 = sections.get("p11", {}).get("data", {})
    for era in ("modern", "legacy"):
        for variant, goal, limit in (
            ("five servers: a call to each", "≤ 1.2×", 1.2),
            ("five configured, one called", "≤ 1.2× (does not wait for the others)", 1.2),
            ("waiting 1 s: five servers, a call to each", "≤ 1.2× (start is waiting, not CPU)", 1.2),
        ):
            cell = _get(p11, era, variant, "ratio")
            if cell:
                rows.append(
                    [
                        f"cold start, five stdio servers, {variant} / slowest single server's start, {era}",
                        goal,
                        _ratio(cell),
                        ok_text(cell["median"] <= limit),
                    ]
                )
    p4 = sections.get("p4", {}).get("data", {})
    for era in ("modern", "legacy"):
        cell = p4.get(era, {}).get("cached get_tools")
        if cell:
            spread = f"[{cell['p25'] * 1e3:.2f}–{cell['p75'] * 1e3:.2f}]"
            rows.append(
                [
                    f"cached `get_tools()`, 2,000 tools, {era}",
                    "≤ 2 ms",
                    f"{cell['median'] * 1e3:.2f} ms {spread}",
                    ok_text(cell["median"] <= 0.002),
                ]
            )
    p8 = sections.get("p8", {}).get("data", {})
    for era in ("modern", "legacy"):
        for arrival in ("burst", "waves"):
            cell = p8.get(f"{era}/{arrival}", {})
            label = f"RSS per paused graph thread, HTTP, {era}, {arrival}"
            if "rss_per_paused_thread_kb" in cell:
                kb = cell["rss_per_paused_thread_kb"] * 1.024  # KiB -> kB
                label = f"RSS per paused graph thread, {cell['threads']:,} threads, HTTP, {era}, {arrival}"
                own = f"; own answer {cell['own_answer']}/{cell['threads']}"
                # A thread that did not get its own answer back fails the row, whatever its memory.
                complete = cell["own_answer"] == cell["threads"]
                verdict = ok_text(kb <= 50) if complete else "**failed**"
                rows.append([label, "≤ 50 KB", f"{kb:.0f} KB{own}", verdict])
            elif "error" in cell:
                rows.append([label, "≤ 50 KB", f"failed: {cell['error'][:100]}", "**failed**"])
    return rows


def _get(node: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _ratio(cell: Any) -> str:
    if not isinstance(cell, dict) or "median" not in cell:
        return "—"
    return f"{cell['median']:.2f}× [{cell['p25']:.2f}–{cell['p75']:.2f}]"


def summary(sections: dict[str, dict[str, Any]]) -> list[str]:
    """The short table the README quotes: one row per question, one column per era."""
    data = {key: section.get("data", {}) for key, section in sections.items()}
    eras = ("modern", "legacy")
    rows: list[tuple[str, list[str]]] = []
    p1 = data.get("p1", {})
    rows.append(
        (
            "`servers.call_tool` ÷ raw SDK call (stdio)",
            [_ratio(_get(p1, e, "vs_raw", "variants", "servers.call_tool", "ratio")) for e in eras],
        )
    )
    for name, label in (
        (
            "graph: McpToolNode",
            "graph with `McpToolNode` ÷ the same graph, hand-written node on the raw session",
        ),
        ("graph: ToolNode(get_tools())", "`ToolNode(get_tools())` ÷ the hand-written node"),
    ):
        rows.append(
            (label, [_ratio(_get(p1, e, "vs_hand_written", "variants", name, "ratio")) for e in eras])
        )
    p2 = data.get("p2", {})
    for variant, era, label in (
        (
            "langchain-mcp-adapters: default get_tools() tools in ToolNode",
            "legacy",
            "langchain-mcp-adapters default tools (a session per call) in `ToolNode`, per call ÷ ours",
        ),
        (
            "langchain-mcp-adapters: persistent client.session() tools in ToolNode",
            "legacy",
            "langchain-mcp-adapters `client.session()` tools in `ToolNode`, per call ÷ ours",
        ),
        (
            "langchain.mcp: MCPAdapter tools in ToolNode",
            "modern",
            "`langchain.mcp` `MCPAdapter` tools in `ToolNode`, per call ÷ ours",
        ),
    ):
        cells = ["—", "—"]
        cells[eras.index(era)] = _ratio(_get(p2, era, variant, "vs_ours"))
        rows.append((label, cells))
    p3 = data.get("p3", {})
    rows.append(
        (
            "32 parallel 100 ms calls ÷ one call: stdio / HTTP",
            [
                " / ".join(
                    _ratio(_get(p3, f"{e}/{t}", "servers.call_tool ×32", "ratio")) for t in ("stdio", "http")
                )
                for e in eras
            ],
        )
    )
    rows.append(
        (
            "32-call Send fan-out ÷ the hand-written Send fan-out on the raw session: stdio / HTTP",
            [
                " / ".join(
                    _ratio(_get(p3, f"{e}/{t}", "graph: Send fan-out ×32", "vs_hand_written_send"))
                    for t in ("stdio", "http")
                )
                for e in eras
            ],
        )
    )
    p11 = data.get("p11", {})
    rows.append(
        (
            "cold start, five stdio servers: a call to each / one of them called, ÷ the slowest single server's start",
            [
                " / ".join(
                    _ratio(_get(p11, e, v, "ratio"))
                    for v in ("five servers: a call to each", "five configured, one called")
                )
                for e in eras
            ],
        )
    )
    p4 = data.get("p4", {})
    cells = []
    for e in eras:
        got, listed = _get(p4, e, "cached get_tools"), _get(p4, e, "cached list_tools")
        cells.append(
            f"{got['median'] * 1e3:.2f} ms [{got['p25'] * 1e3:.2f}–{got['p75'] * 1e3:.2f}] "
            f"(list_tools {listed['median'] * 1e3:.2f} ms)"
            if got and listed
            else "—"
        )
    rows.append(("cached `get_tools()`, 2,000 tools (target ≤ 2 ms)", cells))
    p6 = data.get("p6", {})
    cells = []
    for e in eras:
        parts = []
        for path in ("same process", "after restart"):
            runs = _get(p6, f"langgraph-mcp/{e}/{path}")
            if runs:
                added = sorted(r["added"] for r in runs)[len(runs) // 2]
                parts.append(f"{added * 1e3:+.0f} ms, {runs[0]['requests']} calls")
        cells.append(" / ".join(parts) or "—")
    rows.append(
        (
            "elicitation round trip: added time and `tools/call` requests, same process / after a restart",
            cells,
        )
    )
    lc_runs = [
        (k, v) for k, v in p6.items() if k.startswith("langchain.mcp") and k.endswith("/modern/same process")
    ]
    if lc_runs:
        cells = ["—", "—"]
        parts = []
        for path in ("same process", "after restart"):
            key = lc_runs[0][0].replace("same process", path)
            runs = p6.get(key)
            if runs:
                added = sorted(r["added"] for r in runs)[len(runs) // 2]
                parts.append(f"{added * 1e3:+.0f} ms, {runs[0]['requests']} calls")
        cells[0] = " / ".join(parts)
        rows.append(("the same with `langchain.mcp` (its interrupt-based elicitation)", cells))
    p8 = data.get("p8", {})
    cells = []
    for e in eras:
        waves, burst = p8.get(f"{e}/waves", {}), p8.get(f"{e}/burst", {})
        if "rss_per_paused_thread_kb" in waves and "rss_per_paused_thread_kb" in burst:
            cells.append(
                f"{waves['rss_per_paused_thread_kb'] * 1.024:.0f} KB / {burst['rss_per_paused_thread_kb'] * 1.024:.0f} KB, "
                f"own answer {burst['own_answer']}/{burst['threads']}"
            )
        else:
            error = waves.get("error") or burst.get("error") or "not run"
            cells.append(f"failed ({error[:60]})")
    n = _get(p8, "modern/burst", "threads") or 1000
    rows.append(
        (f"{n:,} paused threads over HTTP: RSS per paused thread, arriving in waves / all at once", cells)
    )
    p13 = data.get("p13", {})
    rows.append(
        (
            "three graph workers ÷ one on one PostgreSQL checkpointer, calls/s",
            [_ratio(_get(p13, e, "ratio")) for e in eras],
        )
    )
    out = ["| measure | modern (2026-07-28) | legacy (2025-11-25) |", "|---|---|---|"]
    out.extend(f"| {label} | {cells[0]} | {cells[1]} |" for label, cells in rows)
    return out


def ok_text(ok: bool) -> str:
    return "met" if ok else "**missed**"


def machine() -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    packages = {}
    for name in ("mcp", "langgraph", "langchain-core", "langgraph-mcp"):
        try:
            packages[name] = version(name)
        except Exception:
            packages[name] = "?"
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit.stdout.strip(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": os.getloadavg(),
        "packages": packages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and threads (a smoke run)")
    parser.add_argument("--only", help="comma-separated prefixes, e.g. p1,p4")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for report.md / report.json (default: bench/, or a new temporary directory with --quick)",
    )
    args = parser.parse_args()
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="lgmcp-bench-quick-")) if args.quick else BENCH_DIR
    wanted = [m for m in MODULES if not args.only or m.split("_")[0] in args.only.split(",")]
    info = machine()
    sections: dict[str, dict[str, Any]] = {}
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for module in wanted:
            print(f"running {module} ...", flush=True)
            section = run_module(module, args.quick, Path(tmp) / f"{module}.json")
            sections[section["key"]] = section
            if section.get("failed"):
                failed.append(module)
            status = "FAILED" if section.get("failed") else "ok"
            print(f"  {module}: {status}, {section['seconds']:.0f} s", flush=True)
    total = sum(s["seconds"] for s in sections.values())
    command = "python bench/run_all.py" + (" --quick" if args.quick else "")
    load = ", ".join(f"{x:.1f}" for x in info["load"])
    lines = [
        "# langgraph-mcp benchmark report",
        "",
        f"`{command}` — {info['date']}, commit {info['commit']}, Python {info['python']}, {info['cpus']} CPUs "
        f"(load average at start: {load}), "
        + ", ".join(f"{k} {v}" for k, v in info["packages"].items())
        + f". Total {total:.0f} s.",
        "",
        "Medians with the interquartile range [p25–p75]; ratios are taken per block against a baseline measured "
        "beside it in the same process, so a busy machine moves them less than absolute times.",
        "",
        "## Summary",
        "",
        *summary(sections),
        "",
        "## Targets",
        "",
        "| target | goal | measured | |",
        "|---|---|---|---|",
    ]
    lines.extend("| " + " | ".join(row) + " |" for row in targets(sections))
    lines.append("")
    for section in sections.values():
        lines.append(section["markdown"])
        lines.append(f"_({section['seconds']:.0f} s)_\n")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text("\n".join(lines))
    report = {"machine": info, "command": command, "sections": sections, "targets": targets(sections)}
    (args.out / "report.json").write_text(json.dumps(report, indent=2, default=str))
    print(f"wrote {args.out / 'report.md'} and {args.out / 'report.json'} ({total:.0f} s)")
    if failed:
        print(
            f"FAILED: {', '.join(failed)} (their sections in {args.out / 'report.md'} say why)",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
