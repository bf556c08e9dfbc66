"""``connect``: run a Go agent on a PyFlink stream of Rows.

The rows never pass through Python. ``connect`` only adds operators to the job
graph, on the Java side, over py4j: it keys the Java stream by the named fields
(PyFlink's own ``key_by`` produces pickled keys, which Go cannot read) and calls
the Java shim's ``GoAgents.connect``. The output stream's Row type comes from the
agent's ``describe`` manifest.

Everything is checked here, while the job graph is built, in this order; each
problem raises a :class:`~flinkgo.errors.FlinkGoError` subclass that names it:

1. the arguments (types, key field names)                    -> SchemaError / OptionError
2. the options' cross-option rules                           -> OptionError
3. the binary: exists, is executable, ``describe`` works     -> BinaryError
4. the agent (``go.agent``) and options the agent declares   -> OptionError
5. the input type and key fields, as the JVM sees them       -> SchemaError
6. the Java shim's own checks (the same, once more)          -> the class of the step
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from flinkgo import _jvm, _types
from flinkgo._specs import SPECS_BY_KEY
from flinkgo.errors import BinaryError, FlinkGoError, OptionError, SchemaError
from flinkgo.manifest import check_agent_options, describe
from flinkgo.options import GoAgentOptions

__all__ = ["connect"]


def connect(stream: Any, *, key_fields: Sequence[str], options: GoAgentOptions) -> Any:
    """Runs the agent of ``options`` on ``stream``, keyed by ``key_fields``.

    :param stream: a ``pyflink.datastream.DataStream`` of ``Row`` with a
        ``Types.ROW_NAMED`` type, or the result of ``table_env.to_data_stream(table)``.
        Not a ``KeyedStream``: the key-by happens on the Java side.
    :param key_fields: names of the fields to key by (one or more). One field keys by
        its value, several by a Row of them.
    :param options: the agent's options; ``go.binary`` is required.
    :returns: a ``DataStream`` of ``Row`` typed by the agent's output columns.
    :raises OptionError, BinaryError, SchemaError: before anything is submitted.
    """
    from pyflink.datastream import DataStream, KeyedStream

    if isinstance(stream, KeyedStream):
        raise SchemaError("connect takes the stream before key_by: flinkgo keys it on the Java side by key_fields "
                          "(PyFlink's key_by produces pickled keys that Go cannot read)")
    if not isinstance(stream, DataStream):
        raise SchemaError(f"stream: expected a pyflink DataStream of Row, got {type(stream).__name__}")
    keys = _check_key_fields(key_fields)
    if not isinstance(options, GoAgentOptions):
        raise OptionError(f"options: expected GoAgentOptions, got {type(options).__name__}")
    options.validate()

    j_stream = stream._j_data_stream
    j_env = j_stream.getExecutionEnvironment()
    binary = str(options.get("go.binary"))
    local = _local_binary(binary, j_env)
    manifest = describe(local)
    agent = manifest.agent(options.get("go.agent"), binary=binary)
    check_agent_options(agent, options.to_dict(), SPECS_BY_KEY)

    ep = _jvm.entry_point(j_env)
    j_stream = _as_row_stream(ep, j_stream)
    fields = _types.row_field_names(j_stream.getType())
    for k in keys:
        if k not in fields:
            raise SchemaError(f"key field '{k}' is not a field of the input row {fields}", field=k)

    _call(SchemaError, ep.checkInputType, j_stream.getType())
    j_config = _call(OptionError, ep.buildConfig, _java_map(options.to_dict()))
    j_keyed = _call(SchemaError, ep.keyByFields, j_stream, _java_list(keys))
    j_out = _call(None, ep.connect, j_keyed, j_config)
    return DataStream(j_out)


def _check_key_fields(key_fields: Sequence[str]) -> list[str]:
    if isinstance(key_fields, (str, bytes)) or not isinstance(key_fields, Sequence):
        raise SchemaError(f"key_fields: expected a sequence of field names such as ['customer'], got {key_fields!r}")
    keys = list(key_fields)
    if not keys:
        raise SchemaError("key_fields: at least one field name is needed")
    for k in keys:
        if not isinstance(k, str) or not k:
            raise SchemaError(f"key_fields: {k!r} is not a field name", field=str(k))
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise SchemaError(f"key_fields: '{sorted(dup)[0]}' appears twice", field=sorted(dup)[0])
    return keys


def _local_binary(binary: str, j_env: Any) -> str:
    """``go.binary`` as a local path: itself when absolute, else its distributed-cache file."""
    if os.path.isabs(binary):
        return binary
    from py4j.java_gateway import get_field

    for entry in j_env.getCachedFiles():
        if str(get_field(entry, "f0")) == binary:
            path = str(get_field(get_field(entry, "f1"), "filePath"))
            if path.startswith("file:"):
                from urllib.parse import urlparse

                path = urlparse(path).path
            return path
    raise BinaryError(
        f"option go.binary: '{binary}' is neither an absolute path nor the name of a file registered with "
        f"env.register_cached_file(path, '{binary}', True)", binary=binary)


def _as_row_stream(ep: Any, j_stream: Any) -> Any:
    kind = _types.describe_stream_type(j_stream.getType())
    if kind == "row":
        return j_stream
    if kind == "table":
        row_type = _types.row_type_info_of_table_stream(j_stream.getType())
        return _call(SchemaError, ep.retype, j_stream, row_type)
    raise SchemaError(
        f"the input stream's type is {j_stream.getType()}, not a Row with named fields: give the operator that "
        "produces it output_type=Types.ROW_NAMED([...], [...]), or convert a table with to_data_stream")


def _java_map(values: dict[str, str]) -> Any:
    from pyflink.java_gateway import get_gateway

    m = get_gateway().jvm.java.util.LinkedHashMap()
    for k, v in values.items():
        m.put(k, v)
    return m


def _java_list(values: list[str]) -> Any:
    from pyflink.java_gateway import get_gateway

    lst = get_gateway().jvm.java.util.ArrayList()
    for v in values:
        lst.add(v)
    return lst


def _call(error: type[FlinkGoError] | None, fn: Any, *args: Any) -> Any:
    """Calls the JVM; an IllegalArgumentException becomes ``error`` (or is classified)."""
    from py4j.protocol import Py4JJavaError

    try:
        return fn(*args)
    except Py4JJavaError as e:
        msg, j = _jvm.java_error_message(e)
        if not _jvm.is_illegal_argument(e):
            raise FlinkGoError(f"the Java shim failed while building the job graph: {msg}", java_exception=j) from None
        raise _classify(error, msg, j) from None


def _classify(error: type[FlinkGoError] | None, msg: str, j: Any) -> FlinkGoError:
    option = _option_named(msg)
    if error is None:
        if msg.startswith("unknown option") or (option is not None and option != "go.binary"):
            error = OptionError
        elif "describe" in msg or option == "go.binary" or "protocol" in msg or msg.startswith("agent '"):
            error = BinaryError
        elif msg.startswith("field '") or "input of a Go agent" in msg:
            error = SchemaError
        else:
            error = FlinkGoError
    if error is OptionError:
        return OptionError(msg, option=option or _quoted_after(msg, "unknown option "), java_exception=j)
    if error is SchemaError:
        return SchemaError(msg, field=_quoted_after(msg, "field ") or _quoted_after(msg, "key field "), java_exception=j)
    if error is BinaryError:
        return BinaryError(msg, java_exception=j)
    return error(msg, java_exception=j)


def _option_named(msg: str) -> str | None:
    """``NAME`` of a message ``option NAME: ...``."""
    if msg.startswith("option ") and ":" in msg:
        return msg[len("option "):msg.index(":")]
    return None


def _quoted_after(msg: str, prefix: str) -> str | None:
    """``X`` of a message that starts with ``prefix'X'``."""
    if msg.startswith(prefix + "'"):
        rest = msg[len(prefix) + 1:]
        end = rest.find("'")
        return rest[:end] if end >= 0 else None
    return None
