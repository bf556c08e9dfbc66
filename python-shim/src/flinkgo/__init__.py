"""flinkgo for PyFlink: run a Go agent on a keyed stream of a PyFlink job.

::

    import flinkgo
    from pyflink.common import Types

    options = flinkgo.GoAgentOptions(binary="/opt/agents/orderscoring")
    scored = flinkgo.connect(orders, key_fields=["customer"], options=options)

Rows never pass through Python: the package wires the Java shim's operator into
the job over py4j and ships the shim's jar with the job. See the README.
"""

from flinkgo._jvm import ENV_SHIM_JAR, shim_jar
from flinkgo.connect import connect
from flinkgo.errors import BinaryError, FlinkGoError, OptionError, SchemaError
from flinkgo.manifest import Manifest, describe
from flinkgo.options import GoAgentOptions

__version__ = "0.1.0"

__all__ = [
    "connect",
    "GoAgentOptions",
    "FlinkGoError",
    "OptionError",
    "BinaryError",
    "SchemaError",
    "Manifest",
    "describe",
    "shim_jar",
    "ENV_SHIM_JAR",
    "__version__",
]
