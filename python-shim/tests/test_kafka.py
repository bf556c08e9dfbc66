"""The order-scoring job with the Kafka action-state store (needs a broker).

Runs when ``FLINKGO_KAFKA`` names a bootstrap address (e.g. ``127.0.0.1:9092``,
a broker started by ``testdata``'s Kafka script); skipped otherwise. Each run
uses a fresh topic, which the store creates.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_e2e import check_failure_once_gives_the_same_committed_output

import flinkgo
from flinkgo import GoAgentOptions

KAFKA = os.environ.get("FLINKGO_KAFKA", "")

pytestmark = [pytest.mark.e2e, pytest.mark.kafka,
              pytest.mark.skipif(not KAFKA, reason="needs FLINKGO_KAFKA (a Kafka bootstrap address)")]


def test_kafka_store_failure_once_gives_the_same_committed_output(env_factory: Callable[..., Any], agent_binary: str,
                                                                   tmp_path: Path) -> None:
    options = GoAgentOptions(
        binary=agent_binary,
        batch_size=32,
        action_state_store_backend="kafka",
        kafka_bootstrap_servers=KAFKA,
        kafka_action_state_topic=f"flinkgo-pytest-{uuid.uuid4().hex[:12]}",
        kafka_action_state_topic_num_partitions=4,
    )
    check_failure_once_gives_the_same_committed_output(env_factory, options, tmp_path)


def _testagent_binary(agent_binary: str) -> str:
    """bin/flinkgo-testagent beside the example binary (``make agent`` builds both)."""
    path = os.environ.get("FLINKGO_TESTAGENT") or str(Path(agent_binary).with_name("flinkgo-testagent"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"no test agent binary at {path}: run `make agent` or set FLINKGO_TESTAGENT")
    return path


def _run_sideeffects(env_factory: Callable[..., Any], options: GoAgentOptions, tmp: Path, *, n: int) -> dict[str, int]:
    """Runs the sideeffects agent over n inputs with one failure injected after a
    completed checkpoint; returns how often each "<step> <id>" line was logged,
    i.e. how often each action body (and each durable call) ran."""
    from pyflink.common import Encoder, Row, Types, WatermarkStrategy
    from pyflink.datastream.connectors.file_system import FileSink, RollingPolicy
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource
    from pyflink.datastream.functions import MapFunction

    tmp.mkdir(parents=True)
    log, marker, out_dir = tmp / "bodies.log", tmp / "failed.marker", tmp / "out"
    log.touch()

    class ToInputFailingOnce(MapFunction):  # type: ignore[misc]
        def map(self, value: int) -> Any:
            import time

            committed = any(not f.startswith(".") for _r, _d, fs in os.walk(out_dir) for f in fs)
            if value >= n // 2 and not marker.exists() and committed:
                # Wait until the agent has finished every earlier input, so that
                # completed actions past the last checkpoint exist when the job
                # fails (no barrier passes this blocked map meanwhile).
                deadline = time.time() + 10
                while f"second {value - 1}" not in log.read_text():
                    if time.time() > deadline:
                        raise AssertionError(f"input {value - 1} did not finish in Go within 10 s")
                    time.sleep(0.05)
                marker.write_text("failed once\n")
                raise RuntimeError(f"injected failure at input {value}")
            time.sleep(0.002)
            return Row(id=value, customer=f"c{value % 7}", mode="plain", log=str(log))

    row_type = Types.ROW_NAMED(["id", "customer", "mode", "log"],
                               [Types.LONG(), Types.STRING(), Types.STRING(), Types.STRING()])
    # Bundles of one row: each row leaves the Python map at once, so the
    # failing map can wait for the earlier rows to finish in Go.
    env = env_factory(parallelism=1, checkpoint_ms=400, restarts=3,
                      extra={"python.fn-execution.bundle.size": "1"})
    seq = env.from_source(NumberSequenceSource(1, n), WatermarkStrategy.no_watermarks(), "sequence")
    ds = seq.map(ToInputFailingOnce(), output_type=row_type)
    out = flinkgo.connect(ds, key_fields=["customer"], options=options)
    out.sink_to(FileSink.for_row_format(str(out_dir), Encoder.simple_string_encoder())
                .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build())
    env.execute("flinkgo-kafka-bodies")
    assert marker.exists(), "the failure was not injected"
    counts: dict[str, int] = {}
    for line in log.read_text().splitlines():
        counts[line] = counts.get(line, 0) + 1
    return counts


def test_kafka_store_completed_actions_do_not_run_again(env_factory: Callable[..., Any], agent_binary: str,
                                                         tmp_path: Path) -> None:
    """After a failure, inputs past the last checkpoint are delivered again. Without
    a store their action bodies run again; with the Kafka store the completed ones
    are replayed from the log instead. Only an action that was running when the
    job failed may run twice (at most num-async-threads of them)."""
    n = 400
    binary = _testagent_binary(agent_binary)
    # batch_size=1: every row reaches Go at once, so the failing map can wait for it.
    base = dict(binary=binary, agent="sideeffects", batch_size=1, num_async_threads=2)

    plain = _run_sideeffects(env_factory, GoAgentOptions(**base), tmp_path / "none", n=n)
    rerun_plain = sorted(k for k, c in plain.items() if k.startswith("first ") and c > 1)
    assert rerun_plain, "without a store no completed input ran again: the scenario proves nothing"

    stored = _run_sideeffects(env_factory, GoAgentOptions(
        **base, action_state_store_backend="kafka", kafka_bootstrap_servers=KAFKA,
        kafka_action_state_topic=f"flinkgo-pytest-{uuid.uuid4().hex[:12]}",
        kafka_action_state_topic_num_partitions=4), tmp_path / "kafka", n=n)
    for i in range(1, n + 1):
        assert stored.get(f"first {i}", 0) >= 1 and stored.get(f"second {i}", 0) >= 1, f"input {i} never ran"
    twice = sorted(k for k, c in stored.items() if c > 1 and k.split()[0] in ("first", "second", "call1"))
    assert len(twice) <= 2, f"completed action bodies or durable calls ran again with the Kafka store: {twice}"
