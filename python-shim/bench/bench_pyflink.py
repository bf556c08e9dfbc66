"""Rows per second of a PyFlink job: the Go agent vs the same logic in Python.

Both contenders run in this one process, on this machine, one after the other,
on the same generated orders (Flink SQL ``datagen`` sequence, so generation costs
no Python) into a discarding sink:

* ``go-agent``: ``flinkgo.connect`` -> the Go order-scoring agent (examples/orderscoring);
* ``pyflink-kpf``: ``key_by(customer)`` -> a Python ``KeyedProcessFunction`` running
  ``orderscoring_logic`` (the same per-customer state and the same risk function).

Throughput is rows / the job's net runtime (JobExecutionResult), which includes
starting the Go process or the Python workers; use enough rows to make that small.
Peak RSS is sampled from /proc every 100 ms: the JVM (MiniCluster), the Go agent
processes and the PyFlink Python workers.

    python python-shim/bench/bench_pyflink.py --binary bin/orderscoring out.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))
if not os.environ.get("FLINKGO_SHIM_JAR"):
    # In the repository without an installed wheel: the jar that `mvn package` built.
    _built = sorted(p for p in (HERE.parents[1] / "java-shim" / "target").glob("flinkgo-shim-*.jar")
                    if not p.name.startswith("original-"))
    if _built:
        os.environ["FLINKGO_SHIM_JAR"] = str(_built[-1])

from order_scoring import order_table_sql  # noqa: E402
from orderscoring_logic import CustomerState, score  # noqa: E402
from pyflink.common import Configuration, Row, Types  # noqa: E402
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment  # noqa: E402
from pyflink.datastream.state import ValueStateDescriptor  # noqa: E402
from pyflink.table import StreamTableEnvironment  # noqa: E402

import flinkgo  # noqa: E402

OUT_NAMES = ["customer", "order_id", "orders", "avg_amount", "risk", "flagged"]
OUT_TYPES = [Types.STRING(), Types.LONG(), Types.LONG(), Types.DOUBLE(), Types.DOUBLE(), Types.BOOLEAN()]


class ScoreOrders(KeyedProcessFunction):  # type: ignore[misc]
    """The agent's logic as a PyFlink KeyedProcessFunction (state: count + last amounts)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.orders = runtime_context.get_state(ValueStateDescriptor("orders", Types.LONG()))
        self.amounts = runtime_context.get_state(ValueStateDescriptor("amounts", Types.LIST(Types.DOUBLE())))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> Any:
        st = CustomerState(self.orders.value() or 0, list(self.amounts.value() or []))
        out = score(st, value.customer, value.order_id, value.amount)
        self.orders.update(st.orders)
        self.amounts.update(st.amounts)
        yield Row(*out)


class RssSampler:
    """Peak resident set size (MiB) of process groups, sampled from /proc."""

    def __init__(self, *, binary: str) -> None:
        self.binary = binary
        self.peak: dict[str, float] = {"jvm": 0.0, "go": 0.0, "python_workers": 0.0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _group(self, cmd: list[str]) -> str | None:
        if not cmd:
            return None
        if os.path.realpath(cmd[0]) == self.binary:
            return "go"
        joined = " ".join(cmd)
        if "java" in os.path.basename(cmd[0]) and "PythonGatewayServer" in joined:
            return "jvm"
        if "pyflink.fn_execution" in joined or "beam_boot" in joined or "pyflink-udf-runner" in joined:
            return "python_workers"
        return None

    def _sample(self) -> None:
        totals = dict.fromkeys(self.peak, 0.0)
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
                group = self._group([c for c in cmd if c])
                if group is None:
                    continue
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        totals[group] += int(line.split()[1]) / 1024
            except OSError:
                continue
        for k, v in totals.items():
            self.peak[k] = max(self.peak[k], v)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self._sample()

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _env(parallelism: int) -> tuple[Any, Any]:
    conf = Configuration()
    conf.set_string("parallelism.default", str(parallelism))
    conf.set_string("python.executable", sys.executable)
    conf.set_string("python.client.executable", sys.executable)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    return env, StreamTableEnvironment.create(env)


def _orders(t_env: Any, *, rows: int, customers: int) -> Any:
    ddl, query = order_table_sql(orders=rows, customers=customers, rows_per_second=1_000_000_000)
    t_env.execute_sql(ddl)
    return t_env.to_data_stream(t_env.sql_query(query))


def _discard(ds: Any) -> None:
    from pyflink.datastream.connectors import Sink
    from pyflink.java_gateway import get_gateway

    j_sink = get_gateway().jvm.org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink()
    ds.sink_to(Sink(j_sink))


def run_go(*, binary: str, rows: int, customers: int, parallelism: int, batch_size: int) -> dict[str, Any]:
    env, t_env = _env(parallelism)
    options = flinkgo.GoAgentOptions(binary=binary, batch_size=batch_size)
    _discard(flinkgo.connect(_orders(t_env, rows=rows, customers=customers), key_fields=["customer"], options=options))
    return _execute(env, "go-agent", rows, binary)


def run_python(*, binary: str, rows: int, customers: int, parallelism: int) -> dict[str, Any]:
    env, t_env = _env(parallelism)
    env.add_python_file(str(HERE.parent / "examples" / "orderscoring_logic.py"))
    ds = _orders(t_env, rows=rows, customers=customers)
    scored = ds.key_by(lambda r: r.customer, key_type=Types.STRING()) \
        .process(ScoreOrders(), output_type=Types.ROW_NAMED(OUT_NAMES, OUT_TYPES))
    _discard(scored)
    return _execute(env, "pyflink-kpf", rows, binary)


def _execute(env: Any, name: str, rows: int, binary: str) -> dict[str, Any]:
    with RssSampler(binary=binary) as rss:
        t0 = time.perf_counter()
        result = env.execute(f"bench {name}")
        wall = time.perf_counter() - t0
    net_s = result.get_net_runtime() / 1000.0
    return {
        "contender": name,
        "rows": rows,
        "net_runtime_s": round(net_s, 3),
        "wall_s": round(wall, 3),
        "rows_per_s": round(rows / net_s, 1),
        "peak_rss_mib": {k: round(v, 1) for k, v in rss.peak.items()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("output", help="path of the JSON file to write")
    p.add_argument("--binary", default=str(HERE.parents[1] / "bin" / "orderscoring"), help="the Go agent binary")
    p.add_argument("--rows-go", type=int, default=300_000, help="orders for the Go agent run")
    p.add_argument("--rows-python", type=int, default=20_000, help="orders for the Python KeyedProcessFunction run")
    p.add_argument("--customers", type=int, default=1000)
    p.add_argument("--parallelism", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=4096, help="go.batch.size")
    args = p.parse_args(argv)
    binary = os.path.realpath(args.binary)

    results = [
        run_go(binary=binary, rows=args.rows_go, customers=args.customers, parallelism=args.parallelism,
               batch_size=args.batch_size),
        run_python(binary=binary, rows=args.rows_python, customers=args.customers, parallelism=args.parallelism),
    ]
    go, py = results
    ratio = go["rows_per_s"] / py["rows_per_s"] if py["rows_per_s"] else float("inf")
    report = {
        "benchmark": "pyflink order scoring: Go agent vs Python KeyedProcessFunction",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "parallelism": args.parallelism,
        "customers": args.customers,
        "results": results,
        "go_vs_python_throughput": round(ratio, 2),
    }

    header = f"{'contender':<12} {'rows':>9} {'net s':>8} {'rows/s':>12} {'JVM MiB':>8} {'Go MiB':>7} {'Py MiB':>7}"
    print(header)
    print("-" * len(header))
    for r in results:
        m = r["peak_rss_mib"]
        print(f"{r['contender']:<12} {r['rows']:>9} {r['net_runtime_s']:>8.2f} {r['rows_per_s']:>12.0f} "
              f"{m['jvm']:>8.0f} {m['go']:>7.0f} {m['python_workers']:>7.0f}")
    print(f"go-agent / pyflink-kpf throughput: {ratio:.1f}x")
    Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
