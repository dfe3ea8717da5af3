"""A missing optional dependency raises an ImportError that carries its ``pip install "kafkawire[extra]"`` line,
and the extras of pyproject.toml install what the messages promise.

Absence is simulated with ``sys.modules[name] = None`` (Python then refuses the import, exactly as when the
package is not installed), so these run in the full test environment.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from kafkawire import RecordColumns, encode_records
from kafkawire._optional import DEPENDENCIES, MissingDependencyError, require
from kafkawire.cli.main import main

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 (cibuildwheel's oldest test run): pip's vendored copy of the same
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "pandas")
    with pytest.raises(ImportError) as info:
        require("pandas", "doing something")
    assert isinstance(info.value, MissingDependencyError)
    assert str(info.value) == 'doing something needs pandas, which is not installed: pip install "kafkawire[pandas]"'
    assert info.value.name == "pandas" and info.value.extra == "pandas"


def test_an_import_error_inside_an_installed_package_is_not_relabelled(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # An installed package that fails on an import of its own: a pip line for the package would not fix that.
    (tmp_path / "kwfake_pkg.py").write_text("import kwfake_missing_inner\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(DEPENDENCIES, "kwfake_pkg", ("kwfake-pkg", "fake"))
    with pytest.raises(ModuleNotFoundError) as info:
        require("kwfake_pkg", "x")
    assert not isinstance(info.value, MissingDependencyError)
    assert info.value.name == "kwfake_missing_inner"


def test_arrow_and_pandas_conversions(monkeypatch: pytest.MonkeyPatch) -> None:
    cols = importlib.import_module("kafkawire").decode_records(encode_records([b"a"]))
    _hide(monkeypatch, "pandas")
    with pytest.raises(MissingDependencyError, match=re.escape('pip install "kafkawire[pandas]"')):
        cols.to_pandas()
    _hide(monkeypatch, "pyarrow")
    with pytest.raises(MissingDependencyError, match=re.escape('pip install "kafkawire[arrow]"')):
        RecordColumns.empty().to_arrow()
    with pytest.raises(MissingDependencyError, match=re.escape('pip install "kafkawire[arrow]"')):
        cols.value.to_arrow()


@pytest.mark.parametrize(
    ("module", "hidden", "extra"),
    [("kafkawire.compat.kafka_python", "kafka", "kafka-python"), ("kafkawire.compat.aiokafka", "aiokafka", "aiokafka")],
)
def test_drop_in_modules(monkeypatch: pytest.MonkeyPatch, module: str, hidden: str, extra: str) -> None:
    _hide(monkeypatch, hidden)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingDependencyError, match=re.escape(f'pip install "kafkawire[{extra}]"')):
        importlib.import_module(module)


def test_spark_data_source_and_session(monkeypatch: pytest.MonkeyPatch) -> None:
    import kafkawire.spark

    _hide(monkeypatch, "pyspark", "pyspark.sql")
    monkeypatch.delitem(sys.modules, "kafkawire.spark.source", raising=False)
    with pytest.raises(MissingDependencyError, match=re.escape('pip install "kafkawire[spark]"')):
        kafkawire.spark.KafkaWireDataSource  # noqa: B018
    with pytest.raises(MissingDependencyError, match=re.escape('pip install "kafkawire[spark]"')):
        kafkawire.spark.session("local[1]")


def test_embedded_broker_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafkawire.testing.brokers import BrokerStartError
    from kafkawire.testing.noida import noida_binary

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "noida_db" else real(name, *a))
    hint = 'noida-db is not installed: pip install "kafkawire[brokers]"'
    with pytest.raises(BrokerStartError, match=re.escape(hint)):
        noida_binary()


def test_broker_processes_need_mirakuru(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafkawire.testing import brokers, start_broker

    _hide(monkeypatch, "mirakuru")
    monkeypatch.setattr(brokers, "_MIRAKURU", None)
    hint = 'pip install "kafkawire[brokers]"'
    with pytest.raises(MissingDependencyError, match=re.escape(hint)):
        start_broker("tansu")


def test_cli_prints_the_install_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # `kafkawire demo` checks its dependencies before it starts a broker: one line, exit status 1.
    _hide(monkeypatch, "tqdm")
    assert main(["demo", "--no-spark"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['kafkawire: error: kafkawire demo needs tqdm, which is not installed: pip install "kafkawire[demo]"']


def _extra_requirements(extras: dict[str, list[str]], extra: str) -> set[str]:
    """Distribution names an extra installs, following self-references such as ``kafkawire[spark,cli]``."""
    names: set[str] = set()
    for req in extras[extra]:
        name = re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0].lower()
        if name == "kafkawire":
            for inner in re.search(r"\[(.*)\]", req).group(1).split(","):  # type: ignore[union-attr]
                names |= _extra_requirements(extras, inner.strip())
        else:
            names.add(name)
    return names


def test_extras_install_what_the_messages_name() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, (distribution, extra) in DEPENDENCIES.items():
        assert distribution in _extra_requirements(extras, extra), (module, extra)
    # to_pandas() needs pandas and pyarrow; the demo needs Spark, the progress bar and a broker.
    assert {"pandas", "pyarrow"} <= _extra_requirements(extras, "pandas")
    assert {"pyspark", "pyarrow", "tqdm", "noida-db"} <= _extra_requirements(extras, "demo")
