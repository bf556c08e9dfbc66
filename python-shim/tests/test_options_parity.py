"""The Python options match the Java shim's, as the JVM reports them.

The option list comes from ``PythonEntryPoint.optionsJson()`` (``GoAgentOptions.ALL``);
values are checked by parsing the same strings on both sides
(``PythonEntryPoint.canonicalValue``): both must accept with the same canonical
string, or both must reject.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flinkgo import GoAgentOptions, OptionError
from flinkgo._specs import SPECS, SPECS_BY_KEY, Kind, OptionSpec
from flinkgo.manifest import PROTOCOL_VERSION


@pytest.fixture(scope="module")
def java_options(entry_point: Any) -> list[dict[str, Any]]:
    return json.loads(entry_point.optionsJson())


def test_same_names_in_the_same_order(java_options: list[dict[str, Any]]) -> None:
    assert [o["name"] for o in java_options] == [s.key for s in SPECS]


def test_same_kinds_defaults_and_choices(java_options: list[dict[str, Any]]) -> None:
    for o in java_options:
        spec = SPECS_BY_KEY[o["name"]]
        assert (spec.kind.value, spec.default, list(spec.choices)) == (o["kind"], o["default"], o["choices"]), o["name"]


def test_same_docs(java_options: list[dict[str, Any]]) -> None:
    for o in java_options:
        assert SPECS_BY_KEY[o["name"]].doc == o["doc"], o["name"]


def test_same_protocol_version(entry_point: Any) -> None:
    assert entry_point.protocolVersion() == PROTOCOL_VERSION


def _candidates(spec: OptionSpec) -> list[str]:
    common = ["", "   ", "abc", "0", "1", "-1", "+7", " 42 ", "1.5", "9223372036854775807", "9223372036854775808"]
    by_kind = {
        Kind.STRING: ["localhost:9092", "  padded  ", "x"],
        Kind.ENUM: [*spec.choices, *(c.upper() for c in spec.choices), " none ", "other"],
        Kind.BOOLEAN: ["true", "false", "TRUE", " False ", "yes", "1"],
        Kind.INT: [],
        Kind.LONG: [],
        Kind.DURATION: ["1 s", "1s", "500ms", "500 ms", "2 min", "1m", "1 h", "1d", "3 days", "10 seconds", "1500us",
                        "1500 µs", "999999ns", "1 nanos", "2 millis", "7 sec", "7 secs", "1 hours", "1 minute",
                        "5 parsecs", "-1 s", "s", "9223372036854775807 d", "106751991167300 d",
                        "9223372036854775 s", "9223372036854776 s", "9223372036854775807 ms"],
        Kind.BYTES: ["1b", "1 bytes", "64kb", "64 k", "1 KB", "1mb", "1m", "2 mebibytes", "1g", "1 gb", "1t", "1 tb",
                     "8388608 tb", "1 kibibytes", "64 mib", "1 xb"],
    }[spec.kind]
    edges: list[str] = []
    if spec.kind in (Kind.INT, Kind.LONG, Kind.BYTES):
        edges = [str(spec.min - 1), str(spec.min), str(spec.max), str(spec.max + 1)]
    return common + by_kind + edges


def _java(entry_point: Any, key: str, raw: str) -> str | None:
    from py4j.protocol import Py4JJavaError

    try:
        return str(entry_point.canonicalValue(key, raw))
    except Py4JJavaError:
        return None


def _python(spec: OptionSpec, raw: str) -> str | None:
    try:
        return spec.parse_string(raw)
    except OptionError:
        return None


@pytest.mark.parametrize("key", [s.key for s in SPECS])
def test_same_values_accepted_and_rendered(entry_point: Any, key: str) -> None:
    spec = SPECS_BY_KEY[key]
    mismatches = []
    for raw in _candidates(spec):
        j, p = _java(entry_point, key, raw), _python(spec, raw)
        if j != p:
            mismatches.append((raw, j, p))
    assert not mismatches, f"{key}: (value, java, python) differ: {mismatches}"


def test_java_config_accepts_the_python_canonical_strings(entry_point: Any) -> None:
    """Whatever Python accepts and renders, the Java config builder accepts unchanged."""
    from flinkgo.connect import _java_map

    o = GoAgentOptions(binary="/opt/agent", batch_size=7, batch_bytes="64 kb", retry_wait_interval="3 s",
                       kafka_action_state_tombstone_enabled=True, error_handling_strategy="Ignore",
                       memory_limit="512 mb", agent_options={"custom.option": "v"})
    j_config = entry_point.buildConfig(_java_map(o.to_dict()))
    assert dict(j_config.explicitValues()) == o.to_dict()
