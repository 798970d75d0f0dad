"""MCP Apps in the real Agent Chat UI, in chromium: the demo server's files app (``show_files``) rendered by the
package's host component (``langgraph_mcp/examples/apps_ui/src/host.tsx``, bundled by ``langgraph dev`` through the
config's ``ui`` key) behind the sandbox proxy the API serves (``/mcp-apps/sandbox``, the ``http.app`` routes).

What ran is read from the demo server's own record (its events file). Screenshots and a JSON report per scenario
go where the rest of the tier's go (``tests/browser/artifacts/``)."""

from __future__ import annotations

import hashlib
import json
import shutil
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.browser.agent_chat_ui import (
    Browser,
    BrowserUnavailable,
    _npm,
    artifacts_dir,
    cache_dir,
    chromium_ready,
    installed_driver,
    installed_ui,
    langgraph_dev,
    next_dev,
    unavailable,
)
from tests.browser.apps_browser_graph import APPS_GRAPH_ID, DEMO_EVENTS_ENV, GRAPHS

pytestmark = pytest.mark.slow

OPEN_TIMEOUT_MS = 240_000
APPS_UI = Path(__file__).resolve().parents[2] / "langgraph_mcp" / "examples" / "apps_ui"
APP = 'iframe[title^="MCP App ui://"]'


def installed_apps_ui() -> Path:
    """The host component's sources with their npm dependencies, copied into the cache once per version."""
    files = [APPS_UI / "package.json", APPS_UI / "package-lock.json", *sorted((APPS_UI / "src").iterdir())]
    digest = hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in files)).hexdigest()[:12]
    target = cache_dir() / f"apps-ui-{digest}"
    if (target / ".installed").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    (target / "src").mkdir(parents=True)
    for file in files:
        shutil.copy(file, target / ("src" if file.parent.name == "src" else "") / file.name)
    _npm(["ci"], target, target / "npm-install.log")
    (target / ".installed").write_text("ok\n")
    return target


@dataclass(frozen=True)
class Served:
    browser: Browser
    events: Path

    def ran(self, tool: str, event: str = "enter") -> int:
        if not self.events.exists():
            return 0
        lines = [json.loads(line) for line in self.events.read_text().splitlines() if line.strip()]
        return sum(1 for e in lines if e["tool"] == tool and e["event"] == event)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    try:
        chromium_ready()
        ui = installed_ui()
        driver = installed_driver()
        apps_ui = installed_apps_ui()
    except BrowserUnavailable as error:
        unavailable(str(error))
    workdir = tmp_path_factory.mktemp("apps-browser")
    events = workdir / "demo-events.jsonl"
    extra = {
        "ui": {APPS_GRAPH_ID: "./apps_ui/src/host.tsx"},
        "http": {"app": "langgraph_mcp.examples.apps_sandbox:app"},
    }
    env = {DEMO_EVENTS_ENV: str(events)}
    with (
        langgraph_dev(
            workdir, graphs=GRAPHS, extra_env=env, extra_config=extra, links={"apps_ui": apps_ui}
        ) as api,
        next_dev(ui, workdir) as ui_url,
    ):
        query = urllib.parse.urlencode({"apiUrl": api, "assistantId": APPS_GRAPH_ID})
        yield Served(Browser(f"{ui_url}/?{query}", api, driver, artifacts_dir(), workdir), events)


def _shown() -> list[dict[str, Any]]:
    """Open the page, ask for the files, wait for the app to show the tool's result."""
    return [
        {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
        {"do": "send", "text": "show me my files"},
        {"do": "settled"},  # the card redraw 4 s after a new thread is over before any card is answered
        {"do": "app_text", "text": "todo.txt", "shot": "app-rendered"},
    ]


def test_the_app_renders_sandboxed_and_a_read_only_call_from_it_runs_and_shows_its_result(
    served: Served,
) -> None:
    before = served.ran("files_snapshot")
    report = served.browser.run(
        "apps-read-only",
        [
            *_shown(),
            {"do": "app_facts", "shot": "app-facts"},
            {"do": "app_click", "button": "Refresh", "idle": True},
            {"do": "app_text", "text": "files_snapshot: ", "shot": "app-refreshed"},
            {"do": "app_facts"},
        ],
        ui_assets=True,
    )
    facts = next(step["app"] for step in report.steps if "app" in step)  # the first app_facts
    api_origin = urllib.parse.urlsplit(served.browser.api_url)
    page_origin = urllib.parse.urlsplit(served.browser.page_url)
    assert (api_origin.scheme, api_origin.netloc) != (page_origin.scheme, page_origin.netloc)
    assert facts["outer_src"] == f"{served.browser.api_url}/mcp-apps/sandbox"  # the proxy: the API's origin
    assert facts["outer_sandbox"] == "allow-scripts allow-forms"
    assert (
        facts["inner_sandbox"] == "allow-scripts allow-forms"
    )  # no same-origin, no top navigation, no popups
    assert facts["app_origin"] == "null" and facts["proxy_origin"] == "null"  # opaque origins
    assert "notes.txt" in facts["app_files"] and "todo.txt" in facts["app_files"]
    assert served.ran("files_snapshot") == before + 1
    assert "files_snapshot: " in report.steps[-1]["app"]["app_status"]


def test_a_destructive_call_from_the_app_shows_the_card_and_runs_once_after_approve(served: Served) -> None:
    before = served.ran("delete_file", "commit")
    served.browser.run(
        "apps-approve",
        [
            *_shown(),
            {"do": "app_click", "selector": 'button[data-file="todo.txt"]', "idle": True},
            {"do": "card", "title": "demo_delete_file", "shot": "app-card"},
            {"do": "text", "text": "asks to call delete_file"},
            {"do": "fill", "field": "Decision", "value": "approve"},
            {"do": "click", "button": "Submit"},
            {"do": "app_text", "text": "delete_file: Deleted todo.txt", "shot": "app-approved"},
        ],
        ui_assets=True,
    )
    assert served.ran("delete_file", "commit") == before + 1


def test_a_destructive_call_from_the_app_never_runs_after_reject(served: Served) -> None:
    before = served.ran("delete_file")
    report = served.browser.run(
        "apps-reject",
        [
            *_shown(),
            {"do": "app_click", "selector": 'button[data-file="notes.txt"]', "idle": True},
            {"do": "card", "title": "demo_delete_file"},
            {"do": "fill", "field": "Reason", "value": "keep my notes"},
            {"do": "fill", "field": "Decision", "value": "reject"},
            {"do": "click", "button": "Submit"},
            {"do": "app_text", "text": "delete_file: error", "shot": "app-rejected"},
            {"do": "app_facts"},
        ],
        ui_assets=True,
    )
    assert served.ran("delete_file") == before
    assert "notes.txt" in report.steps[-1]["app"]["app_files"]
    status = report.steps[-1]["app"]["app_status"]  # the app was told no, with the person's Reason
    assert "rejected" in status and "keep my notes" in status, status


def test_an_app_cannot_reach_the_page_and_its_messages_and_links_wait_for_the_person(served: Served) -> None:
    report = served.browser.run(
        "apps-sandbox",
        [
            *_shown(),
            {"do": "cookie", "cookie": "lgmcp_secret=page-only"},
            {"do": "app_click", "button": "Probe the sandbox"},
            {"do": "app_text", "text": "top navigation:"},
            {"do": "app_facts", "shot": "app-probed"},
            {"do": "app_click", "button": "Open docs"},
            {
                "do": "text",
                "text": "asks to open a link on modelcontextprotocol.io",
                "shot": "app-link-shown",
            },
            {"do": "page_click", "button": "Dismiss"},
            {"do": "gone", "text": "asks to open a link on"},
            {"do": "app_text", "text": "link: not opened"},
            {"do": "app_click", "button": "Ask the assistant"},
            {"do": "text", "text": "asks to send this message as you", "shot": "app-message-shown"},
            {"do": "page_click", "button": "Dismiss"},
            {"do": "gone", "text": "asks to send this message as you"},
            {"do": "app_text", "text": "message: not sent", "shot": "app-message-dismissed"},
            {"do": "app_facts"},
        ],
        ui_assets=True,
    )
    facts = next(step["app"] for step in report.steps if "app" in step)
    probe = dict(line.split(": ", 1) for line in facts["app_probe"].splitlines())
    assert probe == {
        "parent DOM": "blocked",
        "top DOM": "blocked",
        "cookies": "blocked",
        "storage": "blocked",
        "top navigation": "blocked",
    }, facts["app_probe"]
    page = urllib.parse.urlsplit(facts["page_url"])  # the page was not navigated away
    assert (
        page.netloc == urllib.parse.urlsplit(served.browser.page_url).netloc
        and "example.com" not in page.geturl()
    )
    assert "lgmcp_secret=page-only" in facts["page_cookie"]  # the page's cookie is there; the app saw none
    # The asks render in the component's shadow root (the steps above waited on them); the conversation does not.
    assert (
        "Summarise my files" not in report.steps[-1]["text"]
    )  # dismissed: nothing was added to the conversation
