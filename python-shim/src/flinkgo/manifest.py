"""The ``<binary> describe`` manifest (docs/protocol.md, "The describe manifest").

:func:`flinkgo.connect` reads it before it calls the JVM, so that a missing
binary, a binary of another protocol version, an unknown agent or an option the
agent does not declare fails in Python with an error that names it. The Java
shim reads it again while it builds the operator; both read the same JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

from flinkgo.errors import BinaryError, OptionError

__all__ = ["PROTOCOL_VERSION", "Column", "AgentInfo", "Manifest", "describe", "check_binary_file"]

#: The wire protocol version this package's shim speaks (``Protocol.VERSION`` in Java).
PROTOCOL_VERSION = 1

#: How long ``describe`` may take (as ``GoAgents.DESCRIBE_TIMEOUT_MS``).
DESCRIBE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Column:
    """An output column: name and Flink SQL type name."""

    name: str
    type: str


@dataclass(frozen=True)
class AgentInfo:
    """One agent of a binary: its output columns and the options it declares."""

    name: str
    output: tuple[Column, ...]
    options: tuple[str, ...]


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest."""

    protocol: int
    runtime: str
    agents: tuple[AgentInfo, ...]

    def agent(self, name: str | None, *, binary: str) -> AgentInfo:
        """The agent to run: ``name``, or the only agent when ``name`` is ``None``.

        Raises :class:`OptionError` (``go.agent``) naming the agents the binary holds.
        """
        names = [a.name for a in self.agents]
        for a in self.agents:
            if a.name == name:
                return a
        if name is None and len(self.agents) == 1:
            return self.agents[0]
        if name is None:
            raise OptionError(f"option go.agent: required, '{binary}' holds several agents {names}", option="go.agent")
        raise OptionError(f"option go.agent: '{binary}' holds no agent '{name}'; it holds {names}", option="go.agent")

    @staticmethod
    def parse(text: str, *, source: str) -> Manifest:
        """Parses the JSON text; a structural problem is a :class:`BinaryError`."""
        try:
            root = json.loads(text)
        except ValueError as e:
            raise BinaryError(f"{source}: describe output is not JSON: {e}", binary=source) from None
        if not isinstance(root, dict):
            raise BinaryError(f"{source}: describe output is not a JSON object", binary=source)
        protocol = root.get("protocol")
        if not isinstance(protocol, int) or isinstance(protocol, bool):
            raise BinaryError(f"{source}: describe output has no integer 'protocol'", binary=source)
        agents_json = root.get("agents")
        if not isinstance(agents_json, list) or not agents_json:
            raise BinaryError(f"{source}: describe output lists no agents", binary=source)
        agents = []
        for a in agents_json:
            name = _text(a, "name", source)
            cols = tuple(Column(_text(c, "name", source), _text(c, "type", source)) for c in _list(a, "output"))
            if not cols:
                raise BinaryError(f"{source}: agent '{name}' declares no output columns", binary=source)
            opts = tuple(_text(o, "name", source) for o in _list(a, "options"))
            agents.append(AgentInfo(name, cols, opts))
        runtime = root.get("runtime")
        return Manifest(protocol, runtime if isinstance(runtime, str) else "", tuple(agents))


def _list(obj: object, key: str) -> list[object]:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, list) else []


def _text(obj: object, key: str, source: str) -> str:
    v = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(v, str) or not v:
        raise BinaryError(f"{source}: describe output has no string '{key}' in {obj!r}", binary=source)
    return v


def check_binary_file(path: str) -> None:
    """Raises :class:`BinaryError` unless ``path`` is an existing executable regular file."""
    if not os.path.isabs(path):
        raise BinaryError(f"option go.binary: {path} is not an absolute path", binary=path)
    if not os.path.exists(path):
        raise BinaryError(f"option go.binary: {path} does not exist", binary=path)
    if not os.path.isfile(path):
        raise BinaryError(f"option go.binary: {path} is not a file", binary=path)
    if not os.access(path, os.X_OK):
        raise BinaryError(f"option go.binary: {path} is not executable (chmod +x it)", binary=path)


def describe(binary: str | os.PathLike[str], *, timeout: float = DESCRIBE_TIMEOUT_S) -> Manifest:
    """Runs ``<binary> describe`` and parses its manifest.

    Raises :class:`BinaryError` if the binary is missing or not executable, exits
    non-zero, hangs, prints something that is not a manifest, or speaks another
    protocol version.
    """
    path = os.fspath(binary)
    check_binary_file(path)
    try:
        proc = subprocess.run([path, "describe"], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise BinaryError(f"'{path} describe' did not finish within {timeout:g} s", binary=path) from None
    except OSError as e:
        raise BinaryError(f"option go.binary: cannot run '{path} describe': {e}", binary=path) from e
    stderr = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise BinaryError(f"'{path} describe' exited with code {proc.returncode}" + (f": {stderr}" if stderr else ""),
                          binary=path)
    m = Manifest.parse(proc.stdout.decode("utf-8", "replace"), source=f"'{path} describe'")
    if m.protocol != PROTOCOL_VERSION:
        raise BinaryError(
            f"'{path}' speaks flinkgo protocol {m.protocol} (runtime {m.runtime}), this package speaks protocol "
            f"{PROTOCOL_VERSION}; build the binary with a flinkgo release that matches the package", binary=path)
    return m


def check_agent_options(agent: AgentInfo, names: Iterable[str], known: Iterable[str]) -> None:
    """Raises :class:`OptionError` for the first option that is neither known nor declared by the agent."""
    known_set = set(known)
    for name in names:
        if name not in known_set and name not in agent.options:
            raise OptionError(
                f"unknown option '{name}': it is neither a flinkgo option {sorted(known_set)} nor declared by agent "
                f"'{agent.name}' (declares {list(agent.options)})", option=name)
