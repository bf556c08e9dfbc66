"""The option table: one ``OptionSpec`` per option of the Java shim.

It mirrors ``io.flinkgo.shim.GoAgentOptions`` (names, kinds, defaults, ranges,
choices); ``tests/test_options_parity.py`` checks it against the JVM. Values are
kept as the canonical strings the Java side passes to Go in OPEN: integers in
decimal, booleans as ``true``/``false``, durations as ``<n>ms``, sizes as a
byte count.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from flinkgo._values import parse_bytes, parse_duration_ns, parse_java_long
from flinkgo.errors import OptionError

__all__ = ["Kind", "OptionSpec", "SPECS", "SPECS_BY_KEY", "SPECS_BY_ATTR", "python_name"]

INT_MAX = (1 << 31) - 1
LONG_MAX = (1 << 63) - 1
SHORT_MAX = (1 << 15) - 1


class Kind(enum.Enum):
    """Value kinds, named as ``AgentOption.Kind`` on the Java side."""

    STRING = "STRING"
    INT = "INT"
    LONG = "LONG"
    BOOLEAN = "BOOLEAN"
    DURATION = "DURATION"
    BYTES = "BYTES"
    ENUM = "ENUM"


def python_name(key: str) -> str:
    """The keyword-argument name of an option key.

    ``go.batch.timeout.ms`` -> ``batch_timeout_ms`` (flinkgo's own options drop
    ``go.``); ``kafkaBootstrapServers`` -> ``kafka_bootstrap_servers``;
    ``error-handling-strategy`` -> ``error_handling_strategy``.
    """
    if key.startswith("go."):
        key = key[3:]
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key)
    return re.sub(r"[.\-]", "_", key).lower()


@dataclass(frozen=True)
class OptionSpec:
    """One option: key, kind, canonical default (``None`` = unset), range or choices, doc."""

    key: str
    kind: Kind
    default: str | None
    doc: str
    min: int = 0
    max: int = 0
    choices: tuple[str, ...] = field(default=())

    @property
    def attr(self) -> str:
        """The Python keyword name (see :func:`python_name`)."""
        return python_name(self.key)

    def _bad(self, raw: object, want: str) -> OptionError:
        return OptionError(f"option {self.key}: invalid value {raw!r}, expected {want}", option=self.key)

    def canonical(self, value: object, *, strict: bool) -> str:
        """Checks a value and returns its canonical string.

        ``strict`` (keyword arguments): the value must have the option's Python type
        (``str``, ``int``, ``bool``, ``timedelta`` for durations, ``int`` or ``str`` for
        sizes). Otherwise (dicts, YAML) any scalar is read as its string, as Flink reads
        its configuration.
        """
        if value is None:
            raise OptionError(f"option {self.key}: value is None", option=self.key)
        if not strict:
            return self.parse_string(_as_string(self.key, value))
        k = self.kind
        if k in (Kind.STRING, Kind.ENUM):
            if not isinstance(value, str):
                raise self._bad(value, "a string" if k is Kind.STRING else f"one of {list(self.choices)}")
            return self.parse_string(value)
        if k in (Kind.INT, Kind.LONG):
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._bad(value, "an int")
            return self.parse_string(str(value))
        if k is Kind.BOOLEAN:
            if not isinstance(value, bool):
                raise self._bad(value, "a bool")
            return "true" if value else "false"
        if k is Kind.DURATION:
            if isinstance(value, timedelta):
                if value < timedelta(0):
                    raise self._bad(value, "a non-negative duration")
                us = (value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds
                return f"{us // 1000}ms"
            if isinstance(value, str):
                return self.parse_string(value)
            raise self._bad(value, "a datetime.timedelta or a string such as '1 s' or '500 ms'")
        if k is Kind.BYTES:
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise self._bad(value, "an int (bytes) or a string such as '1mb'")
            return self.parse_string(str(value))
        raise AssertionError(f"unhandled kind {k}")

    def parse_string(self, raw: str) -> str:
        """Parses a string value as ``AgentOption.parse`` does; returns the canonical string."""
        s = raw.strip()
        k = self.kind
        if k is Kind.STRING:
            if not s:
                raise self._bad(raw, "a non-empty string")
            return s
        if k is Kind.ENUM:
            lower = s.lower()
            if lower not in self.choices:
                raise self._bad(raw, f"one of {list(self.choices)}")
            return lower
        if k is Kind.BOOLEAN:
            if s.lower() in ("true", "false"):
                return s.lower()
            raise self._bad(raw, "true or false")
        try:
            if k in (Kind.INT, Kind.LONG):
                v = parse_java_long(s)
                return str(self._range(raw, v))
            if k is Kind.DURATION:
                return f"{parse_duration_ns(s) // 1_000_000}ms"
            if k is Kind.BYTES:
                return str(self._range(raw, parse_bytes(s)))
        except ValueError as e:
            if isinstance(e, OptionError):
                raise
            want = {
                Kind.INT: "an integer",
                Kind.LONG: "a long integer",
                Kind.DURATION: "a duration such as '1 s' or '500 ms'",
                Kind.BYTES: "a size such as '1mb' or '1048576'",
            }[k]
            raise self._bad(raw, f"{want} ({e})") from None
        raise AssertionError(f"unhandled kind {k}")

    def _range(self, raw: str, v: int) -> int:
        if v < self.min or v > self.max:
            raise self._bad(raw, f"a value in [{self.min}, {self.max}]")
        return v

    def typed(self, canonical: str) -> Any:
        """The Python value of a canonical string."""
        k = self.kind
        if k in (Kind.INT, Kind.LONG, Kind.BYTES):
            return int(canonical)
        if k is Kind.BOOLEAN:
            return canonical == "true"
        if k is Kind.DURATION:
            return timedelta(milliseconds=int(canonical[:-2]))
        return canonical


def _as_string(key: str, value: object) -> str:
    """A scalar as Flink's configuration reads it (``True`` -> ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, timedelta):
        us = (value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds
        return f"{us // 1000}ms" if us >= 0 else f"-{-us // 1000}ms"
    raise OptionError(f"option {key}: a {type(value).__name__} is not a valid option value", option=key)


def _s(key: str, default: str | None, doc: str) -> OptionSpec:
    return OptionSpec(key, Kind.STRING, default, doc)


def _i(key: str, default: int | None, lo: int, hi: int, doc: str, kind: Kind = Kind.INT) -> OptionSpec:
    return OptionSpec(key, kind, None if default is None else str(default), doc, lo, hi)


# Same order as GoAgentOptions.ALL.
SPECS: tuple[OptionSpec, ...] = (
    OptionSpec("actionStateStoreBackend", Kind.ENUM, None,
               "Action-state store: 'none', 'memory' (tests) or 'kafka'. Unset (default): none, Flink checkpoints only.",
               choices=("none", "memory", "kafka")),
    _s("kafkaBootstrapServers", "localhost:9092", "Kafka bootstrap servers of the action-state store. Default: localhost:9092."),
    _s("kafkaActionStateTopic", None, "Topic of the action-state log. No default; required when actionStateStoreBackend=kafka."),
    _i("kafkaActionStateTopicNumPartitions", 64, 1, 1 << 20,
       "Partitions of the action-state topic when it is created. Default: 64."),
    _i("kafkaActionStateTopicReplicationFactor", 1, 1, SHORT_MAX,
       "Replication factor of the action-state topic when it is created. Default: 1."),
    OptionSpec("kafkaActionStateTombstoneEnabled", Kind.BOOLEAN, "false",
               "Write per-key tombstones for records covered by a completed checkpoint. Default: false."),
    _s("kafkaActionStateCleanupControlTopic", None,
       "Control topic of checkpoint-aligned cleanup. Unset (default): no aligned cleanup."),
    OptionSpec("error-handling-strategy", Kind.ENUM, "fail", "What a failed action does: fail | retry | ignore. Default: fail.",
               choices=("fail", "retry", "ignore")),
    _i("max-retries", 3, 0, INT_MAX, "Retries of a failed action with error-handling-strategy=retry. Default: 3."),
    OptionSpec("retry-wait-interval", Kind.DURATION, "1000ms", "First wait before a retry; doubles each time. Default: 1 s.",
               0, LONG_MAX),
    _i("num-async-threads", None, 1, 1 << 16,
       "Actions running at once per subtask (different keys). Unset (default): 2 x the cores Go sees."),
    _s("job-identifier", None, "Stable identity of the job in the action-state log. Unset (default): the Flink job id."),
    _s("go.binary", None,
       "The Go agent binary: an absolute path, or the name of a file registered in Flink's distributed cache. Required."),
    _s("go.agent", None, "Name of the agent to run. Unset (default): the binary's only agent; required when it has several."),
    _i("go.batch.size", 4096, 1, 1 << 24, "Rows per DATA batch before it is sent. Default: 4096."),
    _i("go.batch.bytes", 1 << 20, 1024, 64 << 20, "Approximate bytes per DATA batch before it is sent. Default: 1 MiB.",
       Kind.BYTES),
    _i("go.batch.timeout.ms", 10, 0, LONG_MAX,
       "Milliseconds a non-empty batch may wait before it is sent; 0 sends every record at once. Default: 10.", Kind.LONG),
    _i("go.credit.rows", 65536, 1, INT_MAX,
       "In-flight window: rows the operator may send that Go has not finished (Go grants it as credit; at most"
       " 1024 before the first DATA, and fewer for rows larger than go.credit.bytes allows). Default: 65536.",
       Kind.LONG),
    _i("go.socket.buffer.bytes", 4 << 20, 0, 64 << 20,
       "Send buffer (SO_SNDBUF) the operator asks for on its end of the socket, so that it can write a DATA"
       " frame while Go is still reading the one before; the kernel caps it at net.core.wmem_max."
       " 0 keeps the system's default. Default: 4 MiB.", Kind.BYTES),
    _i("go.memory.limit", None, 1 << 20, LONG_MAX, "Soft memory limit of the Go process (GOMEMLIMIT). Unset (default): none.",
       Kind.BYTES),
    _i("go.close.timeout.ms", 10_000, 0, LONG_MAX,
       "Milliseconds to wait for the Go process to exit after CLOSE before it is killed. Default: 10000.", Kind.LONG),
    OptionSpec("go.output.by.reference", Kind.BOOLEAN, "true",
               "Input rows an action emits as they are come back from Go as references to the rows the operator"
               " sent, not as values, when the input is of Row type and equal to the output type and object"
               " reuse is off: the operator keeps the rows it sent until Go's horizon passes them (about one"
               " credit window). false: every output row comes back as values. Default: true."),
    _i("go.max.frame.bytes", 64 << 20, 64 << 10, 64 << 20,
       "Largest frame either side accepts (type byte + payload), 64 KiB .. 64 MiB (protocol limit). Default: 64 MiB.",
       Kind.BYTES),
    _i("go.startup.timeout.ms", 60_000, 1, LONG_MAX,
       "Milliseconds from start of the Go process to READY (connect, handshake, restore). Default: 60000.", Kind.LONG),
    _i("go.barrier.timeout.ms", 600_000, 1, LONG_MAX,
       "Milliseconds from BARRIER to the last SNAPSHOT frame before the Go process is declared hung. Default: 600000.",
       Kind.LONG),
    _i("go.end.timeout.ms", 3_600_000, 1, LONG_MAX,
       "Milliseconds from END_INPUT to END_ACK (all actions finish) before the Go process is declared hung. "
       "Default: 3600000.",
       Kind.LONG),
)

SPECS_BY_KEY: dict[str, OptionSpec] = {s.key: s for s in SPECS}
SPECS_BY_ATTR: dict[str, OptionSpec] = {s.attr: s for s in SPECS}
