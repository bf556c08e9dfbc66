"""The shim jar and the JVM side of the package.

The shaded jar of the Java shim is bundled in ``flinkgo/lib/`` (the Makefile copies
``java-shim/target/flinkgo-shim-*.jar`` there before it builds the package). The
environment variable ``FLINKGO_SHIM_JAR`` names another jar and wins: the way to
use a freshly built shim without rebuilding the package.

On first use with an environment the jar is added to it (``pipeline.jars``, so it
ships with the job) and to the class loader py4j resolves classes with (so the
client can build the operator). Adding is idempotent.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from flinkgo.errors import FlinkGoError

__all__ = ["ENV_SHIM_JAR", "shim_jar", "shim_jar_url", "ensure_jar", "entry_point", "java_error_message"]

#: Environment variable that names the shim jar to use instead of the bundled one.
ENV_SHIM_JAR = "FLINKGO_SHIM_JAR"

_ENTRY_POINT = "io.flinkgo.shim.python.PythonEntryPoint"
_JARS_KEY = "pipeline.jars"


def shim_jar() -> Path:
    """The shim jar: ``$FLINKGO_SHIM_JAR``, else the one bundled in the package."""
    env = os.environ.get(ENV_SHIM_JAR)
    if env:
        p = Path(env)
        if not p.is_file():
            raise FlinkGoError(f"{ENV_SHIM_JAR}={env}: no such file (build it: cd java-shim && mvn -B -q -DskipTests package)")
        return p.resolve()
    bundled = sorted(glob.glob(str(Path(__file__).parent / "lib" / "flinkgo-shim-*.jar")))
    if not bundled:
        raise FlinkGoError(
            "the flinkgo shim jar is not bundled in this installation; build the package with `make python-shim`, "
            f"or set {ENV_SHIM_JAR} to java-shim/target/flinkgo-shim-<version>.jar")
    return Path(bundled[-1]).resolve()


def shim_jar_url() -> str:
    """The jar as a ``file://`` URL."""
    return shim_jar().as_uri()


def _gateway() -> Any:
    from pyflink.java_gateway import get_gateway

    return get_gateway()


def _add_to_class_loader(url: str) -> None:
    from pyflink.util.java_utils import add_jars_to_context_class_loader

    add_jars_to_context_class_loader([url])  # a no-op when it is there already


def ensure_jar(j_env: Any | None) -> None:
    """Makes the shim's classes loadable here and, given an environment, ships the jar with its jobs."""
    url = shim_jar_url()
    _add_to_class_loader(url)
    if j_env is None:
        return
    jvm = _gateway().jvm
    conf = jvm.org.apache.flink.python.util.PythonConfigUtil.getEnvironmentConfig(j_env)
    old = conf.getString(_JARS_KEY, None)
    from pyflink.common import Configuration

    jars = Configuration.parse_list_value(old) if old else []
    if url not in jars:
        conf.setString(_JARS_KEY, str([*jars, url]))


def entry_point(j_env: Any | None = None) -> Any:
    """The Java class ``PythonEntryPoint`` (its static methods), with the jar in place."""
    ensure_jar(j_env)
    from py4j.protocol import Py4JError
    from pyflink.util.java_utils import load_java_class

    try:
        load_java_class(_ENTRY_POINT)
    except Py4JError:
        raise FlinkGoError(
            f"{_ENTRY_POINT} is not in the shim jar {shim_jar()}: the jar is older than this package; rebuild it "
            "(cd java-shim && mvn -B -q -DskipTests package)") from None
    return _gateway().jvm.io.flinkgo.shim.python.PythonEntryPoint


def java_error_message(e: BaseException) -> tuple[str, Any]:
    """The message and the Java exception of a py4j error (the message of the root cause's chain head)."""
    j = getattr(e, "java_exception", None)
    if j is None:
        return str(e), None
    msg = j.getMessage()
    return (str(msg) if msg is not None else str(j.toString())), j


def is_illegal_argument(e: BaseException) -> bool:
    """Whether a py4j error carries a Java ``IllegalArgumentException``."""
    j = getattr(e, "java_exception", None)
    if j is None:
        return False
    return str(j.getClass().getName()) == "java.lang.IllegalArgumentException"
