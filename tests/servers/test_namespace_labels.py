"""Any principal or thread id is one store namespace label of its own, in every namespace the package writes.

LangGraph refuses a namespace label that is empty or holds ``.`` or NUL; e-mail-shaped principals (what most auth
handlers return) are full of dots. ``credentials.namespace_label`` is the one encoding: OAuth records, remembered
decisions and the audit sink's records all go through it, on the in-memory, SQLite and PostgreSQL stores alike.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langgraph_mcp.approval.audit import AUDIT_NAMESPACE
from langgraph_mcp.approval.memory import (
    list_approvals,
    memory_namespace,
    recall,
    remember,
    revoke_approvals,
    signed_entry,
)
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.connection.oauth import oauth_namespace
from langgraph_mcp.credentials import label_value, namespace_label
from langgraph_mcp.policy.binding import ApprovalKey
from langgraph_mcp.policy.verdicts import Verdict
from tests.scale.test_multiworker import pg_dsn, pg_server  # noqa: F401  (the PostgreSQL tier's fixtures)

PRINCIPALS = [
    "ann",
    "ann.lee",
    "ann@example.com",
    "ann%2Elee",  # what "ann.lee" would be escaped to: still somebody else
    "ann%lee",
    "a/b/c",
    "..",
    ".",
    "",
    "\x00",
    "Åsa Ørsted 李雷 🙂",
    "x" * 1024,
    "x" * 1023 + "y",
    "é.🙂" * 256,  # 1 KB of characters, 3 KB and more of UTF-8
    "é.🙂" * 255 + "é.🙃",
]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    if request.param == "postgres":  # a database index holds a few KB per row: long labels are hashed
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(request.getfixturevalue("pg_dsn")) as postgres:
            postgres.setup()
            yield postgres
        return
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    try:
        sqlite = SqliteStore(conn)
        sqlite.setup()
        yield sqlite
    finally:
        conn.close()


def test_every_principal_is_a_label_langgraph_accepts_and_no_two_share_one() -> None:
    labels = [namespace_label(p) for p in PRINCIPALS]
    assert len(set(labels)) == len(PRINCIPALS)
    for principal, label in zip(PRINCIPALS, labels, strict=True):
        assert label and "." not in label and "\x00" not in label and len(label) <= 255
        if len(principal) < 80:  # short ones read back exactly; long ones as their first characters
            assert label_value(label) == principal
    assert namespace_label("ann.lee") == "ann%2Elee"  # readable


def test_each_namespace_the_package_writes_keeps_each_principal_apart(store: BaseStore) -> None:
    for n, principal in enumerate(PRINCIPALS):
        store.put(oauth_namespace("secure", principal), "tokens", {"n": n})
        store.put(memory_namespace("principal", principal), "demo/delete_file", {"n": n})
        store.put((*AUDIT_NAMESPACE, namespace_label(principal)), "record", {"n": n})
    for n, principal in enumerate(PRINCIPALS):
        oauth_item = store.get(oauth_namespace("secure", principal), "tokens")
        memory_item = store.get(memory_namespace("principal", principal), "demo/delete_file")
        audit_item = store.get((*AUDIT_NAMESPACE, namespace_label(principal)), "record")
        assert oauth_item is not None and memory_item is not None and audit_item is not None
        assert oauth_item.value["n"] == memory_item.value["n"] == audit_item.value["n"] == n
    namespaces = store.list_namespaces(prefix=oauth_namespace("secure"), limit=1000)
    assert len(namespaces) == len(PRINCIPALS)


def test_a_remembered_decision_of_a_long_principal_lists_and_revokes_by_its_full_name(
    store: BaseStore,
) -> None:
    long_one, other = PRINCIPALS[-2], PRINCIPALS[-1]
    for principal in (long_one, other):
        store.put(memory_namespace("principal", principal), "demo/delete_file", {"owner": principal})
    owners = sorted(a.owner for a in list_approvals(store, scope="principal"))
    assert owners == sorted([long_one, other])
    [gone] = revoke_approvals(store, scope="principal", owner=long_one)
    assert gone.owner == long_one
    assert [a.owner for a in list_approvals(store)] == [other]


def test_a_remembered_decision_of_every_principal_is_kept_verified_and_recalled(store: BaseStore) -> None:
    """The entry itself holds the principal and the tool call id (any string a client sends, NUL included, which
    PostgreSQL's jsonb refuses): it is kept, listed under its owner, verifies, and answers that principal's next
    call — and no other principal's."""
    key = ApprovalKey("a shared approval key for this test, 32+ chars")
    tool = McpTool(
        server="demo",
        name="delete_file",
        published_name="demo_delete_file",
        title=None,
        description="Delete a file",
        input_schema={"type": "object"},
        output_schema=None,
        annotations=None,
    )
    verdict = Verdict.ask("deleting needs a person")
    principals = [
        p for p in PRINCIPALS if p
    ]  # the empty principal has no principal memory (nobody to bind to)
    entries = {}
    for n, principal in enumerate(principals):
        entries[principal] = signed_entry(
            key,
            scope="principal",
            owner=principal,
            server="demo",
            identity="demo-identity",
            tool="delete_file",
            definition_hash=tool.definition_hash,
            decision={"type": "approve"} if n % 2 else {"type": "reject", "message": "no\x00 100%"},
            arguments=None,
            same_args=False,
            rule="",
            now=float(n),
            tool_call_id=f"call\x00%00-{n}",
            published_name="demo_delete_file",
        )
        assert remember(store, entries[principal])
    for principal in principals:
        found = recall(
            store,
            [],
            key,
            verdict,
            tool,
            identity="demo-identity",
            thread_id="t",
            principal=principal,
            arguments={},
        )
        assert found.entry == entries[principal]
    listed = {approval.owner: approval for approval in list_approvals(store, scope="principal")}
    assert set(listed) == set(principals)
    assert all(
        approval.verifiable(key) and approval.entry == entries[owner] for owner, approval in listed.items()
    )


def test_labels_differ_pairwise_even_where_escapes_could_collide() -> None:
    alphabet = ["%", ".", "2", "E", "5", "\x00", "0", "#", "3"]
    values = ["".join(p) for n in range(4) for p in itertools.product(alphabet, repeat=n)]
    labels = {namespace_label(v) for v in values}
    assert len(labels) == len(values)
