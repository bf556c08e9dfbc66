"""Real local PyFlink jobs through the Go example agent (examples/orderscoring).

Expected rows come from ``orderscoring_logic`` (a bit-exact Python port of the
agent). One Flink job at a time; parallelism at most 2.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import as_tuples, order_type
from jobs import read_committed, run_with_file_sink
from orderscoring_logic import expected_rows, order, orders

import flinkgo
from flinkgo import GoAgentOptions

pytestmark = pytest.mark.e2e


def _by_order(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(rows, key=lambda r: r[1])


def test_rows_from_a_collection(env_factory: Callable[..., Any], agent_binary: str) -> None:
    inputs = list(orders(300, customers=7))
    env = env_factory(parallelism=2)
    ds = env.from_collection(inputs, type_info=order_type())
    out = flinkgo.connect(ds, key_fields=["customer"], options=GoAgentOptions(binary=agent_binary, batch_size=64))
    with out.execute_and_collect("flinkgo-e2e-collection") as results:
        got = as_tuples(results)
    assert _by_order(got) == _by_order(expected_rows(inputs))


def test_two_key_fields_and_the_memory_store(env_factory: Callable[..., Any], agent_binary: str) -> None:
    """Keyed by a Row of (customer, order_id) every order is its own key: a first order each time."""
    inputs = list(orders(100, customers=3))
    env = env_factory(parallelism=2)
    ds = env.from_collection(inputs, type_info=order_type())
    options = GoAgentOptions(binary=agent_binary, action_state_store_backend="memory", batch_timeout_ms=0)
    out = flinkgo.connect(ds, key_fields=["customer", "order_id"], options=options)
    with out.execute_and_collect("flinkgo-e2e-row-key") as results:
        got = as_tuples(results)
    assert _by_order(got) == [(c, i, 1, a, 0.5, False) for c, i, a in inputs]


def test_rows_from_a_table(env_factory: Callable[..., Any], agent_binary: str) -> None:
    """to_data_stream(table), with extra TIMESTAMP, DECIMAL and ARRAY columns the agent ignores."""
    from pyflink.table import DataTypes, StreamTableEnvironment

    inputs = list(orders(120, customers=5))
    env = env_factory(parallelism=1)
    t_env = StreamTableEnvironment.create(env)
    schema = DataTypes.ROW([
        DataTypes.FIELD("customer", DataTypes.STRING()),
        DataTypes.FIELD("order_id", DataTypes.BIGINT()),
        DataTypes.FIELD("amount", DataTypes.DOUBLE()),
        DataTypes.FIELD("placed", DataTypes.TIMESTAMP(3)),
        DataTypes.FIELD("price", DataTypes.DECIMAL(10, 2)),
        DataTypes.FIELD("tags", DataTypes.ARRAY(DataTypes.STRING())),
    ])
    rows = [(c, i, a, datetime(2024, 1, 1, 12, 0, i % 60), Decimal(f"{i}.25"), [c, "x"]) for c, i, a in inputs]
    table = t_env.from_elements(rows, schema)
    out = flinkgo.connect(t_env.to_data_stream(table), key_fields=["customer"], options=GoAgentOptions(binary=agent_binary))
    with out.execute_and_collect("flinkgo-e2e-table") as results:
        got = as_tuples(results)
    assert _by_order(got) == _by_order(expected_rows(inputs))


# ---- exactly-once after a failure ----------------------------------------------------------------


def check_failure_once_gives_the_same_committed_output(env_factory: Callable[..., Any], options: GoAgentOptions,
                                                        tmp_path: Path) -> None:
    """Runs the job twice, without and with one injected failure; the committed output must be the same."""
    n = 1500
    expected = _by_order(expected_rows(order(i, customers=11) for i in range(1, n + 1)))

    clean_marker = tmp_path / "clean.marker"
    clean_marker.write_text("no failure in this run\n")
    run_with_file_sink(env_factory, options, tmp_path / "clean", n=n, fail_at=n // 2, marker=clean_marker,
                       opens=tmp_path / "clean.opens")
    clean = _by_order(read_committed(tmp_path / "clean"))

    marker, opens = tmp_path / "failed.marker", tmp_path / "failed.opens"
    run_with_file_sink(env_factory, options, tmp_path / "failed", n=n, fail_at=(2 * n) // 3, marker=marker, opens=opens)
    failed = _by_order(read_committed(tmp_path / "failed"))

    assert marker.exists(), "the failure was not injected"
    assert opens.read_text().count("open") >= 2, "the map function was not restarted"
    assert len(clean) == n and clean == expected
    assert failed == clean


def test_failure_once_gives_the_same_committed_output(env_factory: Callable[..., Any], agent_binary: str,
                                                       tmp_path: Path) -> None:
    options = GoAgentOptions(binary=agent_binary, batch_size=32)
    check_failure_once_gives_the_same_committed_output(env_factory, options, tmp_path)


def test_the_example_job(env_factory: Callable[..., Any], agent_binary: str) -> None:
    """examples/order_scoring.py's generated orders (Flink SQL datagen) give the expected rows."""
    from order_scoring import order_table_sql
    from pyflink.table import StreamTableEnvironment

    env = env_factory(parallelism=1)
    t_env = StreamTableEnvironment.create(env)
    ddl, query = order_table_sql(orders=200, customers=6, rows_per_second=1_000_000)
    t_env.execute_sql(ddl)
    out = flinkgo.connect(t_env.to_data_stream(t_env.sql_query(query)), key_fields=["customer"],
                          options=GoAgentOptions(binary=agent_binary))
    with out.execute_and_collect("flinkgo-e2e-example") as results:
        got = as_tuples(results)
    assert _by_order(got) == _by_order(expected_rows(orders(200, customers=6)))
