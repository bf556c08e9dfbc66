"""Job helpers shared by the end-to-end tests: a generated order stream that fails
once after a checkpoint, and a FileSink whose committed files are read back."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import order_type

import flinkgo
from flinkgo import GoAgentOptions


def read_committed(out_dir: Path) -> list[tuple[Any, ...]]:
    """Rows of the committed (visible) part files of a FileSink; in-progress files start with '.'."""
    rows = []
    for root, _dirs, files in os.walk(out_dir):
        for f in files:
            if f.startswith("."):
                continue
            for line in (Path(root) / f).read_text().splitlines():
                rows.append(parse_row(line))
    return rows


def parse_row(line: str) -> tuple[Any, ...]:
    # Row.toString of an insert: +I[c3, 17, 4, 212.25, 0.5, false]
    assert line.startswith("+I[") and line.endswith("]"), line
    c, oid, n, avg, risk, flagged = line[3:-1].split(", ")
    return (c, int(oid), int(n), float(avg), float(risk), flagged == "true")


def run_with_file_sink(env_factory: Callable[..., Any], options: GoAgentOptions, out_dir: Path, *, n: int,
                        fail_at: int, marker: Path, opens: Path) -> None:
    from orderscoring_logic import order
    from pyflink.common import Encoder, WatermarkStrategy
    from pyflink.datastream.connectors.file_system import FileSink, RollingPolicy
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource
    from pyflink.datastream.functions import MapFunction, RuntimeContext

    class ToOrderFailingOnce(MapFunction):  # type: ignore[misc]
        """Turns a sequence number into an order; raises once (tracked in ``marker``).

        It fails at the first order from ``fail_at`` on once the sink has committed a
        file, i.e. after a checkpoint completed: the restart then restores the Go
        agent's state from that checkpoint instead of starting from scratch.
        """

        def open(self, runtime_context: RuntimeContext) -> None:
            with open(opens, "a") as f:
                f.write("open\n")

        def _committed(self) -> bool:
            return any(not f.startswith(".") for _r, _d, files in os.walk(out_dir) for f in files)

        def map(self, value: int) -> Any:
            import time

            from pyflink.common import Row

            if value >= fail_at and not marker.exists() and self._committed():
                marker.write_text("failed once\n")
                raise RuntimeError(f"injected failure at order {value}")
            time.sleep(0.002)  # spread the input over several checkpoints
            c, i, a = order(value, customers=11)
            return Row(customer=c, order_id=i, amount=a)

    env = env_factory(parallelism=2, checkpoint_ms=300, restarts=3)
    env.add_python_file(str(Path(__file__).resolve().parents[1] / "examples" / "orderscoring_logic.py"))
    seq = env.from_source(NumberSequenceSource(1, n), WatermarkStrategy.no_watermarks(), "sequence").set_parallelism(1)
    ds = seq.map(ToOrderFailingOnce(), output_type=order_type()).set_parallelism(1)
    out = flinkgo.connect(ds, key_fields=["customer"], options=options)
    # A part file is committed at every checkpoint, so committed output shows up during the run.
    sink = (FileSink.for_row_format(str(out_dir), Encoder.simple_string_encoder())
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build())
    out.sink_to(sink).set_parallelism(1)
    env.execute("flinkgo-e2e-failure")
