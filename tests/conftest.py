"""Shared test configuration: which codec implementations run, and a guard against silent fallbacks.

How the suite selects implementations
-------------------------------------
* Tests that take the ``impl`` fixture run once per implementation module that is *available*:
  ``kafkawire._pure.codec`` (always) and ``kafkawire._codec`` (the compiled core, when it imports).
  Ids are ``pure`` and ``compiled``.
* Tests that use the public API (``kafkawire.decode_records`` ...) run against whichever implementation
  ``kafkawire`` selected. CI runs the suite twice: once normally, with ``KAFKAWIRE_REQUIRE_COMPILED=1``
  (compiled core active), and once with ``KAFKAWIRE_PURE=1`` (reference active).
* ``KAFKAWIRE_REQUIRE_COMPILED=1`` makes a missing compiled core an error, never a skip: the session
  aborts at start if ``kafkawire.compiled`` is False or ``kafkawire._codec`` does not import. aiokafka users
  once ran 6x slower for months because its extension silently failed to build and the pure fallback
  took over; this check is what keeps CI from doing the same.
* Without that variable (a developer checkout that has not run ``setup.py build_ext --inplace``), tests
  that need both implementations parametrise only over the ones that import; there is deliberately
  no skip for a missing compiled module. Differential tests then compare the reference with itself,
  which still checks that it is deterministic (same bytes twice, same exception class twice).

Hypothesis profiles: ``default`` (fast, used locally and in the normal CI job) and ``thorough``
(``HYPOTHESIS_PROFILE=thorough``: many more examples, for nightly runs).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

REQUIRE_COMPILED = os.environ.get("KAFKAWIRE_REQUIRE_COMPILED", "") not in ("", "0")

settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,  # the pure reference and first-call imports make wall-clock deadlines flaky
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _load_implementations() -> dict[str, ModuleType]:
    """The implementation modules that import here, keyed ``pure`` / ``compiled``.

    With ``KAFKAWIRE_REQUIRE_COMPILED=1`` an ImportError of the compiled core propagates (loudly).
    """
    impls = {"pure": importlib.import_module("kafkawire._pure.codec")}
    try:
        impls["compiled"] = importlib.import_module("kafkawire._codec")
    except ImportError:
        if REQUIRE_COMPILED:
            raise
    return impls


IMPLEMENTATIONS: dict[str, ModuleType] = _load_implementations()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Abort the run if the compiled core was required but ``kafkawire`` fell back to pure Python."""
    if not REQUIRE_COMPILED:
        return
    import kafkawire

    if not kafkawire.compiled or "compiled" not in IMPLEMENTATIONS:
        raise pytest.UsageError(
            "KAFKAWIRE_REQUIRE_COMPILED=1 but kafkawire.compiled is False "
            f"(KAFKAWIRE_PURE={os.environ.get('KAFKAWIRE_PURE')!r}); build it with "
            "`python setup.py build_ext --inplace` or `pip install .`"
        )


def pytest_report_header(config: pytest.Config) -> str:
    import kafkawire

    active = "compiled" if kafkawire.compiled else "pure"
    return f"kafkawire: public API uses the {active} codec; impl fixture covers {sorted(IMPLEMENTATIONS)}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``impl`` over every available implementation and ``candidate_impl`` over the non-reference ones.

    ``candidate_impl`` is what differential tests compare with the pure reference; when the compiled core is
    absent (and not required) the reference stands in, so the test still runs (as a determinism check).
    """
    if "impl" in metafunc.fixturenames:
        names = sorted(IMPLEMENTATIONS)
        metafunc.parametrize("impl", [IMPLEMENTATIONS[n] for n in names], ids=names)
    if "candidate_impl" in metafunc.fixturenames:
        names = [n for n in sorted(IMPLEMENTATIONS) if n != "pure"] or ["pure"]
        metafunc.parametrize("candidate_impl", [IMPLEMENTATIONS[n] for n in names], ids=[f"{n}-vs-pure" for n in names])


@pytest.fixture(scope="session")
def reference() -> ModuleType:
    """The pure-Python reference implementation (``kafkawire._pure.codec``)."""
    return IMPLEMENTATIONS["pure"]


# ------------------------------------------------------------------------------------- Apache Kafka


@pytest.fixture(scope="session")
def kafka_broker():  # type: ignore[no-untyped-def]
    """Apache Kafka itself (KRaft, one JVM), shared by the whole session: the reference broker.

    Never skipped: when the jars cannot be resolved or the JVM does not start, the tests that use it fail
    with the broker's own log tail. Tests that restart or kill a broker must start their own with
    ``start_broker("kafka")`` instead of disturbing this one.
    """
    from kafkawire.testing import start_broker

    broker = start_broker("kafka")
    yield broker
    broker.stop()
