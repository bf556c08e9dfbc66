"""Bad inputs fail in ``connect``, while the job graph is built, with the right exception.

No job runs here: each case builds a graph and expects the error before
``execute`` could be called.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ORDER_FIELDS, order_type

import flinkgo
from flinkgo import BinaryError, FlinkGoError, GoAgentOptions, OptionError, SchemaError

ORDERS = [("alice", 1, 10.0), ("bob", 2, 50.0)]


@pytest.fixture()
def env(env_factory: Callable[..., Any]) -> Any:
    return env_factory()


@pytest.fixture()
def orders(env: Any) -> Any:
    return env.from_collection(ORDERS, type_info=order_type())


def _script(tmp_path: Path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return str(p)


def test_hierarchy() -> None:
    for cls in (OptionError, BinaryError, SchemaError):
        assert issubclass(cls, FlinkGoError)


def test_happy_path_builds_a_typed_stream(orders: Any, agent_binary: str) -> None:
    out = flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary=agent_binary))
    j_type = out._j_data_stream.getType()
    assert [str(n) for n in j_type.getFieldNames()] == ["customer", "order_id", "orders", "avg_amount", "risk", "flagged"]


def test_the_jar_ships_with_the_job_once(env: Any, orders: Any, agent_binary: str) -> None:
    from pyflink.common import Configuration
    from pyflink.java_gateway import get_gateway

    from flinkgo import _jvm

    options = GoAgentOptions(binary=agent_binary)
    flinkgo.connect(orders, key_fields=["customer"], options=options)
    flinkgo.connect(orders, key_fields=["order_id"], options=options)
    conf = get_gateway().jvm.org.apache.flink.python.util.PythonConfigUtil.getEnvironmentConfig(
        env._j_stream_execution_environment)
    jars = Configuration.parse_list_value(conf.getString("pipeline.jars", None))
    assert jars.count(_jvm.shim_jar_url()) == 1


def test_two_key_fields(orders: Any, agent_binary: str) -> None:
    out = flinkgo.connect(orders, key_fields=["customer", "order_id"], options=GoAgentOptions(binary=agent_binary))
    assert out is not None


def test_binary_from_the_distributed_cache(env: Any, orders: Any, agent_binary: str) -> None:
    env.register_cached_file(agent_binary, "orderscoring", True)
    out = flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary="orderscoring"))
    assert out is not None


# ---- options -------------------------------------------------------------------------------------


def test_unknown_option(orders: Any, agent_binary: str) -> None:
    opts = GoAgentOptions.from_dict({"go.binary": agent_binary, "go.batch.sise": 5})
    with pytest.raises(OptionError) as e:
        flinkgo.connect(orders, key_fields=["customer"], options=opts)
    assert e.value.option == "go.batch.sise"
    assert "go.batch.sise" in str(e.value)


def test_missing_binary_option(orders: Any) -> None:
    with pytest.raises(OptionError) as e:
        flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(batch_size=5))
    assert e.value.option == "go.binary"


def test_unknown_agent(orders: Any, agent_binary: str) -> None:
    with pytest.raises(OptionError) as e:
        flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary=agent_binary, agent="nope"))
    assert e.value.option == "go.agent"
    assert "order-scoring" in str(e.value)


def test_options_must_be_go_agent_options(orders: Any, agent_binary: str) -> None:
    with pytest.raises(OptionError):
        flinkgo.connect(orders, key_fields=["customer"], options={"go.binary": agent_binary})  # type: ignore[arg-type]


def test_java_side_option_errors_are_translated(entry_point: Any) -> None:
    """An IllegalArgumentException of the Java config builder becomes an OptionError naming the option."""
    from flinkgo.connect import _call, _java_map

    with pytest.raises(OptionError) as e:
        _call(OptionError, entry_point.buildConfig, _java_map({"go.binary": "/x", "max-retries": "-3"}))
    assert e.value.option == "max-retries"
    assert e.value.java_exception is not None


# ---- the binary ----------------------------------------------------------------------------------


def test_binary_does_not_exist(orders: Any, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-agent")
    with pytest.raises(BinaryError) as e:
        flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary=missing))
    assert e.value.binary == missing and "does not exist" in str(e.value)


def test_binary_not_executable(orders: Any, tmp_path: Path) -> None:
    p = tmp_path / "agent"
    p.write_text("#!/bin/sh\n")
    os.chmod(p, 0o644)
    with pytest.raises(BinaryError, match="not executable"):
        flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary=str(p)))


def test_binary_not_in_the_cache(orders: Any) -> None:
    with pytest.raises(BinaryError, match="register_cached_file"):
        flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary="not-registered"))


@pytest.mark.parametrize("body, message", [
    ("echo broken >&2; exit 3\n", "exited with code 3: broken"),
    ("echo 'not json'\n", "not JSON"),
    ("echo '{\"protocol\": 2, \"runtime\": \"future\", \"agents\": [{\"name\": \"a\", "
     "\"output\": [{\"name\": \"x\", \"type\": \"INT\"}]}]}'\n", "protocol 2"),
    ("echo '{\"protocol\": 1, \"agents\": []}'\n", "no agents"),
])
def test_binary_describe_fails(orders: Any, tmp_path: Path, body: str, message: str) -> None:
    binary = _script(tmp_path, "agent", body)
    with pytest.raises(BinaryError, match=message):
        flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary=binary))


def test_manifest_with_an_unknown_output_type(orders: Any, tmp_path: Path) -> None:
    """Python does not parse output types; the Java shim's error is translated into a BinaryError."""
    binary = _script(tmp_path, "agent", "echo '{\"protocol\": 1, \"agents\": [{\"name\": \"a\", "
                     "\"output\": [{\"name\": \"x\", \"type\": \"WHATEVER\"}]}]}'\n")
    with pytest.raises(BinaryError, match="output column 'x'") as e:
        flinkgo.connect(orders, key_fields=["customer"], options=GoAgentOptions(binary=binary))
    assert e.value.java_exception is not None


def test_option_declared_by_the_agent_passes(orders: Any, tmp_path: Path) -> None:
    binary = _script(tmp_path, "agent", "echo '{\"protocol\": 1, \"agents\": [{\"name\": \"a\", "
                     "\"output\": [{\"name\": \"x\", \"type\": \"INT\"}], \"options\": [{\"name\": \"a.knob\"}]}]}'\n")
    opts = GoAgentOptions(binary=binary, agent_options={"a.knob": 3})
    out = flinkgo.connect(orders, key_fields=["customer"], options=opts)
    assert [str(n) for n in out._j_data_stream.getType().getFieldNames()] == ["x"]
    with pytest.raises(OptionError) as e:
        flinkgo.connect(orders, key_fields=["customer"], options=opts.with_values({"a.other": 1}))
    assert e.value.option == "a.other"


# ---- the input ----------------------------------------------------------------------------------


def test_unmappable_field_type(env: Any, agent_binary: str) -> None:
    from pyflink.common import Types

    t = Types.ROW_NAMED([*ORDER_FIELDS, "tags"],
                        [Types.STRING(), Types.LONG(), Types.DOUBLE(), Types.MAP(Types.STRING(), Types.STRING())])
    ds = env.from_collection([("alice", 1, 1.0, {"a": "b"})], type_info=t)
    with pytest.raises(SchemaError) as e:
        flinkgo.connect(ds, key_fields=["customer"], options=GoAgentOptions(binary=agent_binary))
    assert e.value.field == "tags" and "tags" in str(e.value)
    assert e.value.java_exception is not None


def test_unmappable_nested_field(env: Any, agent_binary: str) -> None:
    from pyflink.common import Types

    inner = Types.ROW_NAMED(["placed"], [Types.SQL_TIMESTAMP()])
    t = Types.ROW_NAMED([*ORDER_FIELDS, "meta"], [Types.STRING(), Types.LONG(), Types.DOUBLE(), inner])
    ds = env.from_collection([], type_info=t)
    with pytest.raises(SchemaError) as e:
        flinkgo.connect(ds, key_fields=["customer"], options=GoAgentOptions(binary=agent_binary))
    assert e.value.field == "meta.placed"


def test_missing_key_field(orders: Any, agent_binary: str) -> None:
    with pytest.raises(SchemaError) as e:
        flinkgo.connect(orders, key_fields=["client"], options=GoAgentOptions(binary=agent_binary))
    assert e.value.field == "client"


@pytest.mark.parametrize("keys", ["customer", [], ["customer", "customer"], [1]])
def test_bad_key_fields_argument(orders: Any, agent_binary: str, keys: Any) -> None:
    with pytest.raises(SchemaError, match="key_fields"):
        flinkgo.connect(orders, key_fields=keys, options=GoAgentOptions(binary=agent_binary))


def test_stream_without_row_type(env: Any, agent_binary: str) -> None:
    ds = env.from_collection(ORDERS, type_info=order_type()).map(lambda r: r)  # no output_type: pickled
    with pytest.raises(SchemaError, match="ROW_NAMED"):
        flinkgo.connect(ds, key_fields=["customer"], options=GoAgentOptions(binary=agent_binary))


def test_keyed_stream_is_rejected(orders: Any, agent_binary: str) -> None:
    with pytest.raises(SchemaError, match="before key_by"):
        flinkgo.connect(orders.key_by(lambda r: r[0]), key_fields=["customer"], options=GoAgentOptions(binary=agent_binary))


def test_table_stream_with_unmappable_column(env: Any, agent_binary: str) -> None:
    from pyflink.table import StreamTableEnvironment

    t_env = StreamTableEnvironment.create(env)
    table = t_env.sql_query("SELECT 'alice' AS customer, CAST(1 AS BIGINT) AS order_id, 1.5e0 AS amount, "
                            "TIME '10:00:00' AS at_time")
    with pytest.raises(SchemaError) as e:
        flinkgo.connect(t_env.to_data_stream(table), key_fields=["customer"], options=GoAgentOptions(binary=agent_binary))
    assert e.value.field == "at_time"
