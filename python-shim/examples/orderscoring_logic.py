"""The order-scoring agent's logic in plain Python (a port of examples/orderscoring).

Used for the expected rows in the tests and as the PyFlink baseline in the
benchmark: per customer, keep the order count and the last five amounts; score
each order with ``risk`` (the same deterministic bootstrap as the Go ``Risk``,
bit for bit: the same xorshift64* generator and the same float operations in the
same order); emit ``customer, order_id, orders, avg_amount, risk, flagged``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["HISTORY_LEN", "FLAG_THRESHOLD", "risk", "CustomerState", "score", "expected_rows", "order", "orders"]

HISTORY_LEN = 5
FLAG_THRESHOLD = 0.75
RISK_RESAMPLES = 256
RISK_SPIKE_FACTOR = 1.5

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_STAR = 0x2545F4914F6CDD1D

Output = tuple[str, int, int, float, float, bool]


def risk(amount: float, history: list[float]) -> float:
    """Share of 256 bootstrap resamples of ``history`` whose mean ``amount`` exceeds 1.5-fold.

    0.5 with no history. Mirrors ``orderscoring.Risk``.
    """
    n = len(history)
    if n == 0:
        return 0.5
    # Go: uint64(n)*golden ^ uint64(int64(amount*100)) ^ star; int64() truncates toward zero.
    state = ((n * _GOLDEN) & _M64) ^ (int(amount * 100) & _M64) ^ _STAR
    if state == 0:
        state = 1
    above = 0
    for _ in range(RISK_RESAMPLES):
        s = 0.0
        for _ in range(n):
            state ^= state >> 12
            state ^= (state << 25) & _M64
            state ^= state >> 27
            s += history[(((state * _STAR) & _M64) >> 33) % n]
        if amount > RISK_SPIKE_FACTOR * s / n:
            above += 1
    return above / RISK_RESAMPLES


@dataclass
class CustomerState:
    """What the agent keeps per customer in short-term memory."""

    orders: int = 0
    amounts: list[float] = field(default_factory=list)


def score(state: CustomerState, customer: str, order_id: int, amount: float) -> Output:
    """Scores one order and updates ``state``, as actions ``score`` + ``decide`` do."""
    history = state.amounts
    r = risk(amount, history)
    if len(history) == HISTORY_LEN:
        history = history[1:]
    s = amount
    for a in history:
        s += a
    state.amounts = [*history, amount]
    state.orders += 1
    return (customer, order_id, state.orders, s / len(state.amounts), r, r >= FLAG_THRESHOLD)


def expected_rows(inputs: Iterable[tuple[str, int, float]]) -> list[Output]:
    """The output rows for inputs in their per-customer order (any interleaving of customers)."""
    states: dict[str, CustomerState] = {}
    out = []
    for customer, order_id, amount in inputs:
        out.append(score(states.setdefault(customer, CustomerState()), customer, order_id, amount))
    return out


def order(i: int, *, customers: int = 50) -> tuple[str, int, float]:
    """The i-th generated order: customer ``c<i mod customers>``, amounts exact in binary (multiples of 0.25)."""
    return (f"c{i % customers}", i, float((i * 7919) % 500) + 0.25 * (i % 4))


def orders(n: int, *, customers: int = 50, start: int = 1) -> Iterator[tuple[str, int, float]]:
    """Orders ``start .. start+n-1``."""
    return (order(i, customers=customers) for i in range(start, start + n))
