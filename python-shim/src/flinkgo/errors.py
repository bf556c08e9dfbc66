"""The exceptions of flinkgo: one hierarchy, all raised before the job is submitted.

``FlinkGoError`` is the base. Each subclass names the thing that is wrong:

* ``OptionError``: an unknown option, a value of the wrong type or out of range,
  a missing required option, or options that contradict each other;
* ``BinaryError``: the agent binary is missing, not executable, fails its
  ``describe`` or speaks another protocol version;
* ``SchemaError``: the input stream has no Row type the shim can send to Go,
  a key field is missing, or a field type cannot be mapped.

Errors raised by the Java shim while the job graph is built (its
``IllegalArgumentException``) are translated into these classes; the Java
message is kept, and the Java exception is available as ``java_exception``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FlinkGoError", "OptionError", "BinaryError", "SchemaError"]


class FlinkGoError(Exception):
    """Base class of every flinkgo error."""

    def __init__(self, message: str, *, java_exception: Any = None) -> None:
        super().__init__(message)
        self.java_exception = java_exception


class OptionError(FlinkGoError, ValueError):
    """An option is unknown, has the wrong type or value, or is missing.

    ``option`` names the option (``None`` when several are involved).
    """

    def __init__(self, message: str, *, option: str | None = None, java_exception: Any = None) -> None:
        super().__init__(message, java_exception=java_exception)
        self.option = option


class BinaryError(FlinkGoError):
    """The Go agent binary cannot be used (``binary`` is its path or cache name)."""

    def __init__(self, message: str, *, binary: str | None = None, java_exception: Any = None) -> None:
        super().__init__(message, java_exception=java_exception)
        self.binary = binary


class SchemaError(FlinkGoError, TypeError):
    """The input stream's type cannot be sent to Go (``field`` names the field, if one)."""

    def __init__(self, message: str, *, field: str | None = None, java_exception: Any = None) -> None:
        super().__init__(message, java_exception=java_exception)
        self.field = field
