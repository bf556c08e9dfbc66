"""Row types of input streams, read over py4j.

A stream from ``DataStream`` operations with ``output_type=Types.ROW_NAMED(...)``
has a ``RowTypeInfo`` on the Java side, which the shim maps as it is. A stream from
``StreamTableEnvironment.to_data_stream(table)`` carries Rows too, but its type is
the table runtime's ``ExternalTypeInfo``; :func:`row_type_info_of_table_stream`
builds the equivalent ``RowTypeInfo`` from its data type (default conversion
classes: ``LocalDateTime`` for TIMESTAMP, ``Instant`` for TIMESTAMP_LTZ, ...) so
that the Java side can re-type the stream with an identity map.
"""

from __future__ import annotations

from typing import Any

from flinkgo.errors import SchemaError

__all__ = ["describe_stream_type", "row_field_names", "row_type_info_of_table_stream"]

_ROW_TYPE_INFO = "org.apache.flink.api.java.typeutils.RowTypeInfo"
_EXTERNAL_TYPE_INFO = "org.apache.flink.table.runtime.typeutils.ExternalTypeInfo"
_ROW = "org.apache.flink.types.Row"


def _jvm() -> Any:
    from pyflink.java_gateway import get_gateway

    return get_gateway().jvm


def _is(j_obj: Any, class_name: str) -> bool:
    from pyflink.util.java_utils import is_instance_of

    return bool(is_instance_of(j_obj, class_name))


def describe_stream_type(j_type: Any) -> str:
    """``"row"`` (a RowTypeInfo), ``"table"`` (ExternalTypeInfo of Rows) or ``"other"``."""
    if _is(j_type, _ROW_TYPE_INFO):
        return "row"
    try:
        if _is(j_type, _EXTERNAL_TYPE_INFO) and str(j_type.getTypeClass().getName()) == _ROW:
            return "table"
    except Exception:  # the table runtime is not on the class path: not a table stream
        return "other"
    return "other"


def row_field_names(j_row_type: Any) -> list[str]:
    """The field names of a Java RowTypeInfo."""
    return [str(n) for n in j_row_type.getFieldNames()]


# LogicalTypeRoot -> (Types field of the Java TypeInformation, expected conversion class)
_ATOMIC: dict[str, tuple[str, str]] = {
    "BOOLEAN": ("BOOLEAN", "java.lang.Boolean"),
    "TINYINT": ("BYTE", "java.lang.Byte"),
    "SMALLINT": ("SHORT", "java.lang.Short"),
    "INTEGER": ("INT", "java.lang.Integer"),
    "BIGINT": ("LONG", "java.lang.Long"),
    "FLOAT": ("FLOAT", "java.lang.Float"),
    "DOUBLE": ("DOUBLE", "java.lang.Double"),
    "CHAR": ("STRING", "java.lang.String"),
    "VARCHAR": ("STRING", "java.lang.String"),
    "DECIMAL": ("BIG_DEC", "java.math.BigDecimal"),
    "TIMESTAMP_WITHOUT_TIME_ZONE": ("LOCAL_DATE_TIME", "java.time.LocalDateTime"),
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": ("INSTANT", "java.time.Instant"),
    "DATE": ("LOCAL_DATE", "java.time.LocalDate"),
}


def row_type_info_of_table_stream(j_type: Any) -> Any:
    """The Java RowTypeInfo equivalent to the ExternalTypeInfo of a table stream.

    Raises :class:`SchemaError` naming the first field whose type flinkgo cannot map.
    """
    data_type = j_type.getDataType()
    root = str(data_type.getLogicalType().getTypeRoot().name())
    if root != "ROW":
        raise SchemaError(f"the table stream carries {data_type}, not rows")
    return _row(data_type, "")


def _row(data_type: Any, prefix: str) -> Any:
    jvm = _jvm()
    from pyflink.java_gateway import get_gateway

    gateway = get_gateway()
    names = [str(n) for n in data_type.getLogicalType().getFieldNames()]
    children = list(data_type.getChildren())
    j_names = gateway.new_array(jvm.String, len(names))
    j_types = gateway.new_array(jvm.org.apache.flink.api.common.typeinfo.TypeInformation, len(names))
    for i, (name, child) in enumerate(zip(names, children, strict=True)):
        j_names[i] = name
        j_types[i] = _field(child, prefix + name)
    return jvm.org.apache.flink.api.java.typeutils.RowTypeInfo(j_types, j_names)


def _field(data_type: Any, path: str) -> Any:
    jvm = _jvm()
    types = jvm.org.apache.flink.api.common.typeinfo.Types
    root = str(data_type.getLogicalType().getTypeRoot().name())
    conv = str(data_type.getConversionClass().getName())
    if root in _ATOMIC:
        field, want = _ATOMIC[root]
        if conv == want:
            return getattr(types, field)
    elif root in ("BINARY", "VARBINARY"):
        if conv == "[B":
            return jvm.org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO
    elif root == "ARRAY":
        element = list(data_type.getChildren())[0]
        if conv.startswith("[L"):
            return types.OBJECT_ARRAY(_field(element, path + "[]"))
    elif root == "ROW":
        if conv == _ROW:
            return _row(data_type, path + ".")
    raise SchemaError(
        f"field '{path}' has table type {data_type} (as {conv}), which flinkgo cannot send to Go; supported: "
        "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, BYTES, DECIMAL, TIMESTAMP, TIMESTAMP_LTZ, "
        "DATE, ARRAY, ROW with their default conversion classes", field=path)
