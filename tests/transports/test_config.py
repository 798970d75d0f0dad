"""Server configuration: the accepted shapes, and errors that name the server and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_mcp import ConfigError, McpServers, McpServersConfig
from langgraph_mcp.config import HttpServer, InProcessServer, SseServer, StdioServer
from langgraph_mcp.examples.demo_server import build_server

CLAUDE_DESKTOP_SHAPE: dict[str, Any] = {
    "mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"A": "1"}},
        "weather": {"type": "http", "url": "https://weather.example.com/mcp", "headers": {"X-Key": "k"}},
        "legacy": {"url": "http://127.0.0.1:9000/sse"},
        "remote": {"url": "http://127.0.0.1:9001/mcp"},
    }
}


def test_mcp_servers_json_shape_picks_each_transport() -> None:
    config = McpServersConfig.load(CLAUDE_DESKTOP_SHAPE)

    files, weather = config.servers["files"], config.servers["weather"]
    assert isinstance(files, StdioServer)
    assert (files.command, files.args, files.env) == ("npx", ["-y", "server-filesystem", "/tmp"], {"A": "1"})
    assert isinstance(weather, HttpServer)
    assert weather.headers == {"X-Key": "k"}
    assert isinstance(config.servers["legacy"], SseServer)  # a URL ending in /sse
    assert isinstance(config.servers["remote"], HttpServer)  # any other URL: streamable HTTP


def test_plain_dict_shape_equals_mcp_servers_shape() -> None:
    plain = McpServersConfig.load(CLAUDE_DESKTOP_SHAPE["mcpServers"])

    assert plain == McpServersConfig.load(CLAUDE_DESKTOP_SHAPE)


def test_servers_key_with_global_options() -> None:
    config = McpServersConfig.load(
        {"servers": {"a": {"command": "x"}}, "separator": "__", "invalid_names": "sanitize"}
    )

    assert config.separator == "__"
    assert config.invalid_names == "sanitize"


def test_mcp_servers_shape_keeps_global_options() -> None:
    config = McpServersConfig.load({"mcpServers": {"a": {"command": "x"}}, "separator": "-"})

    assert config.separator == "-"


@pytest.mark.parametrize(
    ("transport", "expected"),
    [
        ("stdio", StdioServer),
        ("streamable_http", HttpServer),
        ("streamable-http", HttpServer),
        ("http", HttpServer),
        ("sse", SseServer),
    ],
)
def test_explicit_transport_names_and_aliases(transport: str, expected: type) -> None:
    entry: dict[str, Any] = {"command": "x"} if transport == "stdio" else {"url": "http://h/mcp"}
    config = McpServersConfig.load({"s": {"transport": transport, **entry}})

    assert isinstance(config.servers["s"], expected)


def test_in_process_server_object() -> None:
    demo = build_server()
    config = McpServersConfig.load({"demo": {"transport": "in_process", "server": demo}})

    spec = config.servers["demo"]
    assert isinstance(spec, InProcessServer)
    assert spec.server is demo


def test_per_server_options_have_safe_defaults() -> None:
    spec = McpServersConfig.load({"s": {"command": "x"}}).servers["s"]

    assert spec.mode == "auto"
    assert spec.tool_timeout == 60.0  # finite, unlike the SDK's default
    assert spec.prefix is True
    assert spec.trust_annotations is True
    assert spec.restart_attempts == 3


def test_json_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(CLAUDE_DESKTOP_SHAPE))

    assert McpServersConfig.load(path) == McpServersConfig.load(CLAUDE_DESKTOP_SHAPE)
    assert McpServersConfig.load(str(path)) == McpServersConfig.load(CLAUDE_DESKTOP_SHAPE)
    assert McpServers(path).names == ["files", "weather", "legacy", "remote"]


def test_missing_json_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read server config .*nope\.json"):
        McpServersConfig.load(tmp_path / "nope.json")


def test_invalid_json_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"mcpServers": {')

    with pytest.raises(ConfigError, match=r"broken\.json.*not valid JSON"):
        McpServersConfig.load(path)


@pytest.mark.parametrize(
    ("entry", "field", "why"),
    [
        ({"command": ""}, "command", "at least 1 character"),
        ({"command": "x", "tool_timeout": 0}, "tool_timeout", "greater than 0"),
        ({"command": "x", "connect_timeout": -1}, "connect_timeout", "greater than 0"),
        ({"command": "x", "restart_attempts": -1}, "restart_attempts", "greater than or equal to 0"),
        ({"command": "x", "mode": "2026"}, "mode", "'auto', 'modern' or 'legacy'"),
        ({"command": "x", "args": "not-a-list"}, "args", "valid list"),
        ({"command": "x", "tool_timeuot": 5}, "tool_timeuot", "Extra inputs are not permitted"),
        ({"url": "ftp://example.com/mcp"}, "url", "pattern"),
        ({"url": "http://h/mcp", "headers": {"X": 1}}, "headers.X", "valid string"),
        ({"command": "x", "output": {"image": "nowhere"}}, "output.image", "'content' or 'artifact'"),
    ],
)
def test_bad_entry_names_server_and_field(entry: dict[str, Any], field: str, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        McpServersConfig.load({"mcpServers": {"ok": {"command": "x"}, "broken": entry}})

    message = str(caught.value)
    assert f"server 'broken', field '{field}'" in message
    assert why in message
    assert "'ok'" not in message


def test_entry_without_command_or_url_says_what_to_give() -> None:
    with pytest.raises(ConfigError) as caught:
        McpServersConfig.load({"mystery": {"args": ["x"]}})

    message = str(caught.value)
    assert "server 'mystery'" in message
    assert "'command' (stdio)" in message
    assert "'url'" in message


def test_unknown_transport_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        McpServersConfig.load({"ws": {"transport": "websocket", "url": "ws://h"}})

    assert "server 'ws'" in str(caught.value)
    assert "stdio | streamable_http | sse | in_process" in str(caught.value)


@pytest.mark.parametrize("name", ["has space", "dotted.name", "x" * 65, ""])
def test_server_name_must_be_usable_as_a_tool_prefix(name: str) -> None:
    with pytest.raises(ConfigError, match=f"server name {name!r} must be 1-64 letters"):
        McpServersConfig.load({name: {"command": "x"}})


def test_bad_global_option_names_the_field() -> None:
    with pytest.raises(ConfigError, match="field 'separator'"):
        McpServersConfig.load({"mcpServers": {"a": {"command": "x"}}, "separator": "."})


def test_config_error_is_a_value_error() -> None:
    # Callers that validate input generically (except ValueError) still catch it.
    with pytest.raises(ValueError):
        McpServersConfig.load({"a": {"command": ""}})


def test_unknown_connection_error_policy_is_refused() -> None:
    with pytest.raises(ConfigError, match="on_connection_error must be"):
        McpServers({"a": {"command": "x"}}, on_connection_error="explode")  # type: ignore[arg-type]


def test_every_config_field_is_documented() -> None:
    """Each public field of every config model has its own docstring (what users read in their editor)."""
    import ast

    import langgraph_mcp.config as config_module

    transports = Path(config_module.__file__).parent / "transports"
    sources = [
        Path(config_module.__file__),
        *sorted(transports.glob("*.py")),
    ]  # the models live with their transport
    undocumented = []
    classes = [
        node
        for source in sources
        for node in ast.parse(source.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ClassDef)
    ]
    for cls in classes:
        for i, stmt in enumerate(cls.body):
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            name = stmt.target.id
            if (
                name.startswith("_")
                or name == "model_config"
                or ast.unparse(stmt.annotation).startswith("ClassVar")
            ):
                continue
            after = cls.body[i + 1] if i + 1 < len(cls.body) else None
            if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
                undocumented.append(f"{cls.name}.{name}")
    assert not undocumented, f"config fields without a docstring: {undocumented}"


def test_a_config_dumps_every_transports_fields_and_loads_back() -> None:
    entries = {
        "a": {"command": "x", "env": {"K": "v"}},
        "b": {"url": "http://h/mcp"},
        "c": {"url": "http://h/sse"},
    }
    config = McpServersConfig.load(entries)

    dumped = config.model_dump(mode="json")

    assert dumped["servers"]["a"]["env"] == {"K": "v"} and dumped["servers"]["b"]["url"] == "http://h/mcp"
    assert McpServersConfig.load(dumped) == config
