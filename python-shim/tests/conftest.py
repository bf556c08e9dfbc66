"""Fixtures of the flinkgo tests.

Paths come from the repository layout unless the environment names them:

* ``FLINKGO_SHIM_JAR``: the shim jar (default ``java-shim/target/flinkgo-shim-*.jar``);
* ``FLINKGO_BINARY``: the example agent binary (default ``bin/orderscoring``, built
  with ``go build`` when it is missing and Go is installed).

Tests that need the JVM are skipped with a reason when the jar is missing; the
Makefile builds it first, so under ``make`` nothing is skipped but the Kafka test.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PYTHON_SHIM = Path(__file__).resolve().parents[1]
REPO = PYTHON_SHIM.parent
sys.path.insert(0, str(PYTHON_SHIM / "examples"))


def _default_jar() -> str | None:
    jars = sorted(p for p in glob.glob(str(REPO / "java-shim" / "target" / "flinkgo-shim-*.jar"))
                  if not os.path.basename(p).startswith("original-"))
    return jars[-1] if jars else None


if not os.environ.get("FLINKGO_SHIM_JAR"):
    _jar = _default_jar()
    if _jar:
        os.environ["FLINKGO_SHIM_JAR"] = _jar


@pytest.fixture(scope="session")
def shim_jar() -> str:
    jar = os.environ.get("FLINKGO_SHIM_JAR")
    if not jar or not os.path.isfile(jar):
        pytest.skip("no shim jar: build it with `cd java-shim && mvn -B -q -DskipTests package` or set FLINKGO_SHIM_JAR")
    return jar


@pytest.fixture(scope="session")
def agent_binary() -> str:
    path = os.environ.get("FLINKGO_BINARY") or str(REPO / "bin" / "orderscoring")
    if not os.path.isfile(path):
        go = shutil.which("go")
        if go is None:
            pytest.skip(f"no agent binary at {path} and no Go toolchain to build it")
        subprocess.run([go, "build", "-o", path, "./cmd/orderscoring"], cwd=REPO, check=True)
    return path


@pytest.fixture(scope="session")
def entry_point(shim_jar: str) -> Any:
    """The Java PythonEntryPoint (starts the PyFlink gateway JVM once per session)."""
    from flinkgo import _jvm

    return _jvm.entry_point(None)


def make_env(*, parallelism: int = 1, checkpoint_ms: int | None = None, restarts: int = 0,
             extra: dict[str, str] | None = None) -> Any:
    """A local StreamExecutionEnvironment with small, explicit settings."""
    from pyflink.common import Configuration
    from pyflink.datastream import StreamExecutionEnvironment

    conf = Configuration()
    conf.set_string("parallelism.default", str(parallelism))
    conf.set_string("taskmanager.numberOfTaskSlots", "4")
    # The Python workers of PyFlink operators: few threads, small bundles.
    conf.set_string("python.fn-execution.bundle.size", "100")
    conf.set_string("python.executable", sys.executable)
    conf.set_string("python.client.executable", sys.executable)
    if restarts:
        conf.set_string("restart-strategy.type", "fixed-delay")
        conf.set_string("restart-strategy.fixed-delay.attempts", str(restarts))
        conf.set_string("restart-strategy.fixed-delay.delay", "200 ms")
    else:
        conf.set_string("restart-strategy.type", "none")
    for k, v in (extra or {}).items():
        conf.set_string(k, v)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    if checkpoint_ms:
        env.enable_checkpointing(checkpoint_ms)
    return env


@pytest.fixture()
def env_factory(shim_jar: str) -> Iterator[Any]:
    yield make_env


ORDER_FIELDS = ["customer", "order_id", "amount"]


def order_type() -> Any:
    from pyflink.common import Types

    return Types.ROW_NAMED(ORDER_FIELDS, [Types.STRING(), Types.LONG(), Types.DOUBLE()])


def as_tuples(rows: Any) -> list[tuple[Any, ...]]:
    """Output Rows as tuples (customer, order_id, orders, avg_amount, risk, flagged)."""
    return [tuple(r) for r in rows]
