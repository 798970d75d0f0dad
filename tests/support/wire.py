"""What a client sent over streamable HTTP, read off the wire by an ``httpx2.Auth`` that sees every request."""

from __future__ import annotations

import json
from collections.abc import Generator

import httpx2


class SeenOnTheWire(httpx2.Auth):
    """Each JSON-RPC request sent: its method and the extensions its ``_meta`` advertises."""

    requires_request_body = True

    def __init__(self) -> None:
        self.sent: list[tuple[str, list[str]]] = []

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        body = json.loads(request.content) if request.content else None
        if isinstance(body, dict) and "method" in body:
            meta = (body.get("params") or {}).get("_meta") or {}
            capabilities = meta.get("io.modelcontextprotocol/clientCapabilities") or {}
            self.sent.append((body["method"], sorted(capabilities.get("extensions") or {})))
        yield request

    def advertised(self, method: str) -> list[list[str]]:
        return [extensions for sent, extensions in self.sent if sent == method]
