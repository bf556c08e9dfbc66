"""GoAgentOptions without a JVM: names, types, defaults, dicts and YAML."""

from __future__ import annotations

import inspect
from datetime import timedelta
from pathlib import Path

import pytest

from flinkgo import GoAgentOptions, OptionError
from flinkgo._specs import SPECS, python_name


def test_python_names() -> None:
    assert python_name("actionStateStoreBackend") == "action_state_store_backend"
    assert python_name("kafkaActionStateTombstoneEnabled") == "kafka_action_state_tombstone_enabled"
    assert python_name("error-handling-strategy") == "error_handling_strategy"
    assert python_name("go.batch.timeout.ms") == "batch_timeout_ms"
    assert python_name("go.binary") == "binary"


def test_every_option_is_a_keyword_argument() -> None:
    params = inspect.signature(GoAgentOptions.__init__).parameters
    kw = {n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert kw == {s.attr for s in SPECS} | {"agent_options"}
    assert all(params[n].default is None for n in kw)


def test_defaults_and_typed_reads() -> None:
    o = GoAgentOptions()
    assert o.get("go.batch.size") == 4096
    assert o.get("go.batch.bytes") == 1 << 20
    assert o.get("retry-wait-interval") == timedelta(seconds=1)
    assert o.get("kafkaActionStateTombstoneEnabled") is False
    assert o.get("error-handling-strategy") == "fail"
    assert o.get("actionStateStoreBackend") is None
    assert o.get("go.binary") is None
    assert o.batch_size == 4096 and o.max_retries == 3
    assert o.to_dict() == {}


def test_keyword_values_become_canonical_strings() -> None:
    o = GoAgentOptions(
        binary="/opt/agent", batch_size=512, batch_bytes="64 kb", retry_wait_interval=timedelta(milliseconds=1500),
        kafka_action_state_tombstone_enabled=True, error_handling_strategy="RETRY", memory_limit="1 gb",
        agent_options={"scoring.threshold": 0.9})
    assert o.to_dict() == {
        "error-handling-strategy": "retry",
        "go.batch.bytes": "65536",
        "go.batch.size": "512",
        "go.binary": "/opt/agent",
        "go.memory.limit": str(1 << 30),
        "kafkaActionStateTombstoneEnabled": "true",
        "retry-wait-interval": "1500ms",
        "scoring.threshold": "0.9",
    }
    assert o.agent_options() == {"scoring.threshold": "0.9"}
    assert o.retry_wait_interval == timedelta(milliseconds=1500)


@pytest.mark.parametrize("kwargs, option", [
    ({"batch_size": "big"}, "go.batch.size"),
    ({"batch_size": 1.5}, "go.batch.size"),
    ({"batch_size": True}, "go.batch.size"),
    ({"batch_size": 0}, "go.batch.size"),
    ({"max_retries": -1}, "max-retries"),
    ({"error_handling_strategy": "explode"}, "error-handling-strategy"),
    ({"action_state_store_backend": "redis"}, "actionStateStoreBackend"),
    ({"kafka_action_state_tombstone_enabled": "yes"}, "kafkaActionStateTombstoneEnabled"),
    ({"retry_wait_interval": 5}, "retry-wait-interval"),
    ({"retry_wait_interval": timedelta(seconds=-1)}, "retry-wait-interval"),
    ({"retry_wait_interval": "5 parsecs"}, "retry-wait-interval"),
    ({"max_frame_bytes": "1 tb"}, "go.max.frame.bytes"),
    ({"binary": ""}, "go.binary"),
    ({"binary": 42}, "go.binary"),
    ({"kafka_action_state_topic_replication_factor": 1 << 15}, "kafkaActionStateTopicReplicationFactor"),
])
def test_wrong_values_name_the_option(kwargs: dict[str, object], option: str) -> None:
    with pytest.raises(OptionError) as e:
        GoAgentOptions(**kwargs)  # type: ignore[arg-type]
    assert e.value.option == option
    assert option in str(e.value)


def test_unknown_keyword_is_a_type_error_or_option_error() -> None:
    with pytest.raises(TypeError):
        GoAgentOptions(batch_sise=5)  # type: ignore[call-arg]
    with pytest.raises(OptionError, match="batch_sise"):
        GoAgentOptions().with_options(batch_sise=5)


def test_from_dict_nested_and_flat() -> None:
    o = GoAgentOptions.from_dict({
        "go": {"binary": "/opt/agent", "batch": {"size": 10, "timeout.ms": "0"}},
        "error-handling-strategy": "retry",
        "max-retries": 5,
        "kafkaActionStateTombstoneEnabled": True,
        "retry-wait-interval": 250,
        "scoring": {"threshold": 0.5},
    })
    assert o.to_dict() == {
        "error-handling-strategy": "retry",
        "go.batch.size": "10",
        "go.batch.timeout.ms": "0",
        "go.binary": "/opt/agent",
        "kafkaActionStateTombstoneEnabled": "true",
        "max-retries": "5",
        "retry-wait-interval": "250ms",
        "scoring.threshold": "0.5",
    }
    assert o == GoAgentOptions(binary="/opt/agent", batch_size=10, batch_timeout_ms=0, error_handling_strategy="retry",
                               max_retries=5, kafka_action_state_tombstone_enabled=True,
                               retry_wait_interval=timedelta(milliseconds=250), agent_options={"scoring.threshold": "0.5"})


@pytest.mark.parametrize("values, option", [
    ({"go.batch.size": "ten"}, "go.batch.size"),
    ({"max-retries": None}, "max-retries"),
    ({"go": {"binary": ["a", "b"]}}, "go.binary"),
    ({"num-async-threads": 0}, "num-async-threads"),
])
def test_from_dict_errors(values: dict[str, object], option: str) -> None:
    with pytest.raises(OptionError) as e:
        GoAgentOptions.from_dict(values)
    assert e.value.option == option


def test_from_yaml_reads_the_agent_section(tmp_path: Path) -> None:
    f = tmp_path / "config.yaml"
    f.write_text(
        "parallelism:\n  default: 2\n"
        "agent:\n"
        "  go:\n    binary: /opt/agents/orderscoring\n    batch:\n      size: 512\n"
        "  error-handling-strategy: retry\n"
        "  max-retries: 5\n"
        "  retry-wait-interval: 2 s\n"
        "agent.go.credit.rows: 4096\n"
        "taskmanager:\n  numberOfTaskSlots: [1]\n")
    o = GoAgentOptions.from_yaml(f)
    assert o.to_dict() == {
        "error-handling-strategy": "retry",
        "go.batch.size": "512",
        "go.binary": "/opt/agents/orderscoring",
        "go.credit.rows": "4096",
        "max-retries": "5",
        "retry-wait-interval": "2000ms",
    }


def test_from_yaml_errors(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="cannot read"):
        GoAgentOptions.from_yaml(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  max-retries: many\n")
    with pytest.raises(OptionError) as e:
        GoAgentOptions.from_yaml(bad)
    assert e.value.option == "max-retries"
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert GoAgentOptions.from_yaml(empty).to_dict() == {}


def test_from_flink_config_mapping() -> None:
    o = GoAgentOptions.from_flink_config({"agent.go.binary": "/x", "agent.max-retries": "2", "parallelism.default": "4"})
    assert o.to_dict() == {"go.binary": "/x", "max-retries": "2"}


def test_validate_cross_option_rules() -> None:
    with pytest.raises(OptionError) as e:
        GoAgentOptions().validate()
    assert e.value.option == "go.binary"
    with pytest.raises(OptionError) as e:
        GoAgentOptions(binary="/x", action_state_store_backend="kafka").validate()
    assert e.value.option == "kafkaActionStateTopic"
    with pytest.raises(OptionError) as e:
        GoAgentOptions(binary="/x", batch_bytes="1mb", max_frame_bytes="1mb").validate()
    assert e.value.option == "go.batch.bytes"
    GoAgentOptions(binary="/x", action_state_store_backend="kafka", kafka_action_state_topic="t").validate()


def test_immutable_and_with_options() -> None:
    o = GoAgentOptions(binary="/x")
    with pytest.raises(AttributeError):
        o.batch_size = 5  # type: ignore[misc]
    p = o.with_options(batch_size=5, agent_options={"a.b": "c"}).with_values({"max-retries": 1})
    assert o.to_dict() == {"go.binary": "/x"}
    assert p.to_dict() == {"a.b": "c", "go.batch.size": "5", "go.binary": "/x", "max-retries": "1"}
    assert hash(p) == hash(GoAgentOptions.from_dict(p.to_dict()))
