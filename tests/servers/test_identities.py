"""IdentityPool bookkeeping: which per-run identities are idle, which to close first over the cap, when to look."""

from __future__ import annotations

from langgraph_mcp.servers.connections import IdentityPool


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_idle_identities_are_the_unused_ones_past_the_timeout() -> None:
    clock = Clock()
    pool = IdentityPool(idle_timeout=10, max_identities=5, clock=clock)
    pool.touch("a")
    pool.acquire("b")  # a call in flight
    pool.touch("c")
    clock.now += 11
    assert pool.idle(busy=lambda key: key == "c") == ["a"]  # b is in use, c is held (a paused call)
    pool.release("b")
    assert pool.idle(busy=lambda key: False) == ["a", "c"]  # b was just released: not idle yet
    clock.now += 11
    assert pool.idle(busy=lambda key: False) == ["a", "b", "c"]


def test_over_the_cap_the_least_recently_used_free_identity_goes_first() -> None:
    clock = Clock()
    pool = IdentityPool(idle_timeout=10, max_identities=2, clock=clock)
    for key in ["a", "b", "c"]:
        pool.touch(key)
        clock.now += 1
    pool.touch("a")  # a is now the most recent
    assert pool.over_cap(busy=lambda key: False, keep="c") == ["b"]
    pool.acquire("b")
    assert pool.over_cap(busy=lambda key: False, keep="c") == ["a"]
    pool.acquire("a")
    assert pool.over_cap(busy=lambda key: False, keep="c") == []  # every other one is in use: exceed the cap


def test_the_next_look_skips_identities_in_use_and_waits_a_full_timeout_for_held_ones() -> None:
    clock = Clock()
    pool = IdentityPool(idle_timeout=10, max_identities=5, clock=clock)
    pool.acquire("long-call")
    clock.now += 50  # a call far longer than the idle timeout must not make the sweeper spin
    assert pool.next_due(busy=lambda key: False) is None
    pool.touch("parked")
    clock.now += 50
    assert pool.next_due(busy=lambda key: key == "parked") == 10
    pool.touch("fresh")
    clock.now += 4
    assert pool.next_due(busy=lambda key: key == "parked") == 6
