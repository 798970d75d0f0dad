"""The host a person is shown for a URL is the host a browser goes to: ``inspect_url`` against Node.js's WHATWG
``URL`` (the reference implementation browsers' behaviour is specified by) over a generated corpus of tricky URLs.

Every ``http(s)`` URL of the corpus must get the same host as Node gives it, and a URL Node refuses must get no
host (and must not be openable). Node is part of every machine this project's CI runs on (``.ci/run`` needs it
for the browser tier); without it the test is skipped locally and fails in CI.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess

import pytest

from langgraph_mcp.questions.inspection import inspect_url
from tests.support.helpers import HANG_GUARD

SCHEMES = ["http", "https", "HTTPS", "hTtP"]
SEPARATORS = ["//", "/", "\\\\", "///", "", "/\\", "\\/", " //", "//\t"]
USERINFO = ["", "u@", "u:p@", "a@b@", "bank.example\\@", "bank.example@", "%40@", ":@", "user:pa%20ss@"]
HOSTS = [
    "example.com",
    "EXAMPLE.com",
    "example.com.",
    "faß.de",
    "straße.de",
    "xn--fa-hia.de",
    "bücher.example",
    "例え.jp",
    "ＥＸＡＭＰＬＥ.com",
    "ⓔxample.com",
    "ﬁ.com",
    "☃.net",
    "xn--n3h.net",
    "exa%6Dple.com",
    "ex ample.com",
    "a..b",
    ".example",
    "127.0.0.1",
    "0x7f.1",
    "0177.0.0.1",
    "2130706433",
    "127.1",
    "0x7f000001",
    "1.2.3.256",
    "1.2.3.4.5",
    "0xffffffff",
    "4294967296",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[0:0:0:0:0:0:0:1]",
    "[::ffff:7f00:1]",
    "[2001:db8::1]",
    "[::1",
    "[v1.x]",
    "exa\u00admple.com",
    "xn--",
    "-a.com",
    "a_b.com",
    "%zz.com",
    "a%2Eb.com",
    "localhost",
    "LOCALHOST",
]
PORTS = ["", ":80", ":443", ":8080", ":65535", ":65536", ":0", ":abc", ":", ":0080"]
TAILS = ["/", "/p?q#f", "", "?x", "#y", "\\p", "/%2e%2e/"]
CORPUS_SIZE = 3000

NODE_SCRIPT = r"""
let data = "";
process.stdin.on("data", (c) => (data += c));
process.stdin.on("end", () => {
  const out = JSON.parse(data).map((u) => {
    try { const p = new URL(u); return [p.protocol, p.host]; } catch (e) { return null; }
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def corpus() -> list[str]:
    """A fixed sample (seeded) of scheme × separator × user info × host × port × tail, plus the cases seen in
    issue 27 (IDNA non-transitional, IPv4-mapped IPv6, a file URL with a port)."""
    rng = random.Random(27)
    urls = {
        f"{rng.choice(SCHEMES)}:{rng.choice(SEPARATORS)}{rng.choice(USERINFO)}{rng.choice(HOSTS)}"
        f"{rng.choice(PORTS)}{rng.choice(TAILS)}"
        for _ in range(CORPUS_SIZE)
    }
    urls |= {f"https://{host}/" for host in HOSTS}
    urls |= {
        "https://faß.de/",
        "http://[::ffff:127.0.0.1]/",
        "file://host:443/",
        " \thttps://ev\nil.example/ ",
    }
    return sorted(urls)


def node_reading(urls: list[str]) -> list[tuple[str, str] | None]:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail(
                "node is not installed: the URL differential test needs Node.js (.ci/run installs it)"
            )
        pytest.skip("node is not installed (Node.js's URL is the reference this test compares with)")
    done = subprocess.run(
        [node, "-e", NODE_SCRIPT],
        input=json.dumps(urls),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=True,
    )
    return [tuple(item) if item is not None else None for item in json.loads(done.stdout)]


def test_hosts_match_nodes_whatwg_url_on_every_http_url() -> None:
    urls = corpus()
    differences = []
    http_urls = 0
    for url, seen_by_node in zip(urls, node_reading(urls), strict=True):
        ours = inspect_url(url)
        if seen_by_node is None:
            if ours.host or ours.openable:
                differences.append((url, "node refuses it", ours.host))
            continue
        protocol, host = seen_by_node
        if protocol not in ("http:", "https:"):
            continue
        http_urls += 1
        if ours.host != host or ours.scheme != protocol[:-1] or not ours.openable:
            differences.append((url, host, ours.host))
    assert http_urls > 1000, f"the corpus has only {http_urls} valid http(s) URLs"
    assert not differences, f"{len(differences)} differ from Node's URL, e.g. {differences[:10]}"


@pytest.mark.parametrize(
    ("url", "host", "note"),
    [
        ("https://faß.de/", "xn--fa-hia.de", "internationalized"),  # UTS #46 non-transitional, not fass.de
        ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]", "bare IP address"),
        ("https://user@example.com/", "example.com", "user info"),
    ],
)
def test_what_is_flagged_on_top_of_the_host(url: str, host: str, note: str) -> None:
    seen = inspect_url(url)
    assert seen.host == host and seen.openable
    assert seen.warning is not None and note in seen.warning


def test_a_url_a_browser_refuses_has_no_host() -> None:
    seen = inspect_url("file://host:443/")
    assert seen.host == "" and not seen.openable and seen.warning and "not valid" in seen.warning
