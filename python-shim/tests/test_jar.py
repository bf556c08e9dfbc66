"""Where the shim jar comes from: FLINKGO_SHIM_JAR first, else the bundled one."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkgo import FlinkGoError, _jvm


def test_env_var_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jar = tmp_path / "flinkgo-shim-9.9.jar"
    jar.write_bytes(b"PK")
    monkeypatch.setenv(_jvm.ENV_SHIM_JAR, str(jar))
    assert _jvm.shim_jar() == jar.resolve()
    assert _jvm.shim_jar_url() == jar.resolve().as_uri()


def test_env_var_naming_a_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_jvm.ENV_SHIM_JAR, str(tmp_path / "nope.jar"))
    with pytest.raises(FlinkGoError, match="no such file"):
        _jvm.shim_jar()


def test_bundled_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_jvm.ENV_SHIM_JAR, raising=False)
    (tmp_path / "lib").mkdir()
    monkeypatch.setattr(_jvm, "__file__", str(tmp_path / "_jvm.py"))
    with pytest.raises(FlinkGoError, match="not bundled"):
        _jvm.shim_jar()
    jar = tmp_path / "lib" / "flinkgo-shim-0.1.0.jar"
    jar.write_bytes(b"PK")
    assert _jvm.shim_jar() == jar.resolve()
