"""Parsers for option values, written to accept exactly what the Java shim accepts.

The Java side parses with ``Long.parseLong``, Flink's ``TimeUtils.parseDuration``
and ``MemorySize.parseBytes``; ``tests/test_options_parity.py`` feeds the same
strings to both sides and compares the results. Every function here raises
``ValueError`` with a short reason; the caller adds the option name.
"""

from __future__ import annotations

import re

__all__ = ["parse_java_long", "parse_duration_ns", "parse_bytes", "LONG_MIN", "LONG_MAX"]

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1

_LONG = re.compile(r"[+-]?[0-9]+")
_DIGITS = re.compile(r"[0-9]*")

_NS = {
    "ns": 1,
    "us": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
    "d": 86400 * 1_000_000_000,
}

# Flink's TimeUtils labels (lower case; a label matches after trimming).
_DURATION_LABELS: dict[str, int] = {}
for _unit, _labels in {
    "d": ("d", "day", "days"),
    "h": ("h", "hour", "hours"),
    "m": ("m", "min", "minute", "minutes"),
    "s": ("s", "sec", "secs", "second", "seconds"),
    "ms": ("ms", "milli", "millis", "millisecond", "milliseconds"),
    "us": ("µs", "micro", "micros", "microsecond", "microseconds"),
    "ns": ("ns", "nano", "nanos", "nanosecond", "nanoseconds"),
}.items():
    for _label in _labels:
        _DURATION_LABELS[_label] = _NS[_unit]

# Flink's MemorySize labels (lower case).
_SIZE_LABELS: dict[str, int] = {}
for _mult, _labels in {
    1: ("b", "bytes"),
    1 << 10: ("k", "kb", "kibibytes"),
    1 << 20: ("m", "mb", "mebibytes"),
    1 << 30: ("g", "gb", "gibibytes"),
    1 << 40: ("t", "tb", "tebibytes"),
}.items():
    for _label in _labels:
        _SIZE_LABELS[_label] = _mult

# The Java side renders a duration with Duration.toMillis(), which must fit in a long.
_MAX_DURATION_NS = LONG_MAX * 1_000_000 + 999_999


def parse_java_long(text: str) -> int:
    """``Long.parseLong`` of an already trimmed string (ASCII digits, optional sign)."""
    if not _LONG.fullmatch(text):
        raise ValueError("not an integer")
    v = int(text)
    if v < LONG_MIN or v > LONG_MAX:
        raise ValueError("out of the 64-bit range")
    return v


def _split_number(text: str, what: str) -> tuple[int, str]:
    trimmed = text.strip()
    if not trimmed:
        raise ValueError(f"empty {what}")
    m = _DIGITS.match(trimmed)
    number = m.group(0) if m else ""
    if not number:
        raise ValueError(f"{what} does not start with a number")
    value = int(number)
    if value > LONG_MAX:
        raise ValueError(f"{number} cannot be represented as a 64-bit number")
    return value, trimmed[len(number):].strip().lower()


def parse_duration_ns(text: str) -> int:
    """A duration such as ``"1 s"``, ``"500ms"`` or ``"1000"`` (milliseconds), in nanoseconds."""
    value, label = _split_number(text, "duration")
    if not label:
        mult = _NS["ms"]
    else:
        mult = _DURATION_LABELS.get(label, 0)
        if not mult:
            raise ValueError(f"unknown time unit '{label}' (use ns, µs, ms, s, min, h or d)")
    ns = value * mult
    if ns > _MAX_DURATION_NS:
        raise ValueError("duration too large")
    return ns


def parse_bytes(text: str) -> int:
    """A size such as ``"1mb"``, ``"64 kb"`` or ``"1048576"`` (bytes), in bytes."""
    value, label = _split_number(text, "size")
    if not label:
        return value
    mult = _SIZE_LABELS.get(label, 0)
    if not mult:
        raise ValueError(f"unknown size unit '{label}' (use b, kb, mb, gb or tb)")
    size = value * mult
    if size > LONG_MAX:
        raise ValueError("size does not fit in 64 bits")
    return size
