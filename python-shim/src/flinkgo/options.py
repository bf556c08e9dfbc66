"""``GoAgentOptions``: the options of one Go agent operator, as in the Java shim.

Option keys are the Java ones: Apache Flink Agents names where the meaning is the
same (``actionStateStoreBackend``, ``kafkaBootstrapServers``, ``error-handling-strategy``,
``max-retries``, ...) and flinkgo's own under ``go.`` (``go.binary``, ``go.batch.size``,
...). In Python they are keyword arguments with snake-case names; ``go.`` is dropped::

    GoAgentOptions(binary="/opt/agents/orderscoring", batch_size=512,
                   error_handling_strategy="retry", retry_wait_interval=timedelta(seconds=2))
    GoAgentOptions.from_dict({"go.binary": "/opt/agents/orderscoring", "max-retries": 5})
    GoAgentOptions.from_yaml("conf/config.yaml")        # its agent: section

Every value is checked when it is set; an invalid one raises :class:`OptionError`
naming the option, and nothing invalid is ever replaced by a default. Options the
shim does not know are kept as strings (``agent_options=``, or unknown keys of
``from_dict``); :func:`flinkgo.connect` checks them against the options the agent
declares in its ``describe`` manifest. Cross-option rules (``go.binary`` required,
a topic with the Kafka backend, ``go.batch.bytes`` below ``go.max.frame.bytes``)
are checked by :meth:`GoAgentOptions.validate`, which ``connect`` calls, so that
options can be put together in steps.

Instances are immutable values.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from flinkgo._specs import SPECS, SPECS_BY_ATTR, SPECS_BY_KEY, OptionSpec, _as_string
from flinkgo.errors import OptionError

__all__ = ["GoAgentOptions", "FLINK_CONFIG_PREFIX", "flatten"]

#: The prefix of agent options in the Flink configuration (the ``agent:`` YAML section).
FLINK_CONFIG_PREFIX = "agent."


def flatten(section: Mapping[str, Any], *, prefix: str = "") -> dict[str, Any]:
    """Flattens nested mappings with ``.``: ``{go: {batch: {size: 10}}}`` -> ``{"go.batch.size": 10}``.

    Raises :class:`OptionError` for a null or a list value, as the Java shim does.
    """
    out: dict[str, Any] = {}
    for k, v in section.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, prefix=key + "."))
        elif v is None:
            raise OptionError(f"option {key}: value is null", option=key)
        elif isinstance(v, (list, tuple, set)):
            raise OptionError(f"option {key}: a list is not a valid option value", option=key)
        else:
            out[key] = v
    return out


class GoAgentOptions:
    """Options of a Go agent (see the module doc). Construct with keyword arguments only."""

    __slots__ = ("_values",)

    _values: dict[str, str]

    def __init__(
        self,
        *,
        # Flink Agents names
        action_state_store_backend: str | None = None,
        kafka_bootstrap_servers: str | None = None,
        kafka_action_state_topic: str | None = None,
        kafka_action_state_topic_num_partitions: int | None = None,
        kafka_action_state_topic_replication_factor: int | None = None,
        kafka_action_state_tombstone_enabled: bool | None = None,
        kafka_action_state_cleanup_control_topic: str | None = None,
        error_handling_strategy: str | None = None,
        max_retries: int | None = None,
        retry_wait_interval: timedelta | str | None = None,
        num_async_threads: int | None = None,
        job_identifier: str | None = None,
        # flinkgo (go.*)
        binary: str | os.PathLike[str] | None = None,
        agent: str | None = None,
        batch_size: int | None = None,
        batch_bytes: int | str | None = None,
        batch_timeout_ms: int | None = None,
        credit_rows: int | None = None,
        socket_buffer_bytes: int | str | None = None,
        memory_limit: int | str | None = None,
        close_timeout_ms: int | None = None,
        output_by_reference: bool | None = None,
        max_frame_bytes: int | str | None = None,
        startup_timeout_ms: int | None = None,
        barrier_timeout_ms: int | None = None,
        end_timeout_ms: int | None = None,
        # options the agent declares in its manifest, passed to Go as strings
        agent_options: Mapping[str, Any] | None = None,
    ) -> None:
        given = dict(locals())
        values: dict[str, str] = {}
        for spec in SPECS:
            v = given[spec.attr]
            if v is None:
                continue
            if spec.key == "go.binary" and isinstance(v, os.PathLike):
                v = os.fspath(v)
            values[spec.key] = spec.canonical(v, strict=True)
        if agent_options is not None:
            if not isinstance(agent_options, Mapping):
                raise OptionError("agent_options: expected a mapping of option name to value, "
                                  f"got {type(agent_options).__name__}")
            for name, v in agent_options.items():
                _put_agent_option(values, name, v)
        object.__setattr__(self, "_values", dict(sorted(values.items())))

    # ---- other ways to build ----------------------------------------------------------------

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> GoAgentOptions:
        """Options from option keys (``go.batch.size``, ``max-retries``, ...), nested or flat.

        Nested mappings are flattened with ``.``. Values are read as Flink reads its
        configuration: any scalar is taken as its string (``True`` is ``true``). Keys
        the shim does not know are kept for the agent (checked by ``connect``).
        """
        if not isinstance(values, Mapping):
            raise OptionError(f"from_dict: expected a mapping, got {type(values).__name__}")
        out: dict[str, str] = {}
        for key, v in flatten(values).items():
            if not isinstance(key, str) or not key.strip():
                raise OptionError(f"option name {key!r} is not a non-empty string")
            spec = SPECS_BY_KEY.get(key)
            if spec is None:
                _put_agent_option(out, key, v)
            else:
                out[key] = spec.canonical(v, strict=False)
        inst = cls.__new__(cls)
        object.__setattr__(inst, "_values", dict(sorted(out.items())))
        return inst

    @classmethod
    def from_yaml(cls, source: str | os.PathLike[str], *, section: str = "agent") -> GoAgentOptions:
        """Options from the ``agent:`` section of a Flink configuration YAML file.

        ``source`` is a path. Keys may be nested (``agent: {go: {binary: ...}}``) or flat
        (``agent.go.binary: ...``), as Flink allows; both are flattened with ``.``.
        """
        from ruamel.yaml import YAML  # apache-flink's own YAML reader

        path = os.fspath(source)
        try:
            with open(path, encoding="utf-8") as f:
                doc = YAML(typ="safe", pure=True).load(f)
        except OSError as e:
            raise OptionError(f"cannot read the configuration file {path}: {e}") from e
        except Exception as e:  # ruamel's parse errors have no common public base
            raise OptionError(f"configuration file {path} is not valid YAML: {e}") from e
        if doc is None:
            doc = {}
        if not isinstance(doc, Mapping):
            raise OptionError(f"configuration file {path}: the top level is not a mapping")
        return cls.from_flink_config(_flatten_lenient(doc), section=section)

    @classmethod
    def from_flink_config(cls, config: Mapping[str, Any] | Any, *, section: str = "agent") -> GoAgentOptions:
        """Options from the ``agent.*`` keys of a flat Flink configuration.

        ``config`` is a mapping of flat keys, or a ``pyflink.common.Configuration``.
        """
        if not isinstance(config, Mapping):
            to_dict = getattr(config, "to_dict", None)
            if to_dict is None:
                raise OptionError("from_flink_config: expected a mapping or a pyflink Configuration, "
                                  f"got {type(config).__name__}")
            config = to_dict()
        prefix = section + "."
        picked = {k[len(prefix):]: v for k, v in config.items() if isinstance(k, str) and k.startswith(prefix)}
        return cls.from_dict(picked)

    def with_options(self, **kwargs: Any) -> GoAgentOptions:
        """A copy with more options set by keyword name (same names as the constructor).

        ``agent_options=`` adds agent options to the ones already set.
        """
        unknown = [k for k in kwargs if k not in SPECS_BY_ATTR and k != "agent_options"]
        if unknown:
            raise OptionError(f"unknown option keyword {unknown[0]!r}; known: {sorted(SPECS_BY_ATTR)}", option=unknown[0])
        added = GoAgentOptions(**kwargs)
        return self._merged(added._values)

    def with_values(self, values: Mapping[str, Any]) -> GoAgentOptions:
        """A copy with more options set by key (``from_dict`` rules)."""
        return self._merged(GoAgentOptions.from_dict(values)._values)

    def _merged(self, more: Mapping[str, str]) -> GoAgentOptions:
        inst = GoAgentOptions.__new__(GoAgentOptions)
        object.__setattr__(inst, "_values", dict(sorted({**self._values, **more}.items())))
        return inst

    # ---- reading --------------------------------------------------------------------------------

    def get(self, key: str) -> Any:
        """The effective value of a known option (set, else its default; ``None`` if unset).

        Typed: ``int``, ``bool``, ``str``, ``timedelta`` for durations, ``int`` bytes for sizes.
        """
        spec = _spec(key)
        raw = self._values.get(key, spec.default)
        return None if raw is None else spec.typed(raw)

    def is_set(self, key: str) -> bool:
        """Whether an option (known or agent's) was set explicitly."""
        return key in self._values

    def to_dict(self) -> dict[str, str]:
        """The options that were set, as canonical strings by key (what crosses to Java)."""
        return dict(self._values)

    def agent_options(self) -> dict[str, str]:
        """The options that are not the shim's (for the agent), as given."""
        return {k: v for k, v in self._values.items() if k not in SPECS_BY_KEY}

    def __getattr__(self, name: str) -> Any:
        spec = SPECS_BY_ATTR.get(name)
        if spec is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return self.get(spec.key)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("GoAgentOptions is immutable; use with_options(...)")

    def validate(self) -> None:
        """Cross-option checks (see the module doc). Raises :class:`OptionError`."""
        if self.get("go.binary") is None:
            raise OptionError("option go.binary: required (path or distributed-cache name of the Go agent binary)",
                              option="go.binary")
        if self.get("actionStateStoreBackend") == "kafka" and self.get("kafkaActionStateTopic") is None:
            raise OptionError("option kafkaActionStateTopic: required when actionStateStoreBackend=kafka",
                              option="kafkaActionStateTopic")
        batch, frame = self.get("go.batch.bytes"), self.get("go.max.frame.bytes")
        if batch >= frame:
            raise OptionError(f"option go.batch.bytes: {batch} must be below go.max.frame.bytes ({frame})",
                              option="go.batch.bytes")

    @staticmethod
    def specs() -> tuple[OptionSpec, ...]:
        """The known options, in the Java shim's order."""
        return SPECS

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoAgentOptions) and other._values == self._values

    def __hash__(self) -> int:
        return hash(tuple(self._values.items()))

    def __repr__(self) -> str:
        return f"GoAgentOptions({self._values!r})"


def _spec(key: str) -> OptionSpec:
    spec = SPECS_BY_KEY.get(key)
    if spec is None:
        raise OptionError(f"unknown option '{key}'; known: {list(SPECS_BY_KEY)}", option=key)
    return spec


def _put_agent_option(values: dict[str, str], name: object, v: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise OptionError(f"option name {name!r} is not a non-empty string")
    if name in SPECS_BY_KEY:
        values[name] = SPECS_BY_KEY[name].canonical(v, strict=False)
        return
    if v is None:
        raise OptionError(f"option {name}: value is None", option=name)
    values[name] = _as_string(name, v)


def _flatten_lenient(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flattens a whole YAML document; lists and nulls outside the agent section are kept."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten_lenient(v, key + "."))
        else:
            out[key] = v
    return out
