"""Shared fixtures: the real sandbox (KDC + two kerberized Kafka clusters), started once per session."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import jvm_starts, seeds, session_order

JVM_STARTS = ["as shipped"]  # what the tests' spark-submit JVMs got, said at the end of the run
SCRAM = ("SCRAM-SHA-512", "SCRAM-SHA-256")  # the mechanisms whose connections the session's sandbox re-authenticates
SCRAM_REAUTH_MS = 600_000  # at least this often (a token's session ends sooner, with the token)
_STOPS: dict[str, Callable[[], None]] = {}  # the shared servers up now, by fixture: how to stop each
_LAST_USERS: dict[str, str] = {}  # fixture -> the test after which nothing needs it (tests/support/session_order.py)


def _stop_once(name: str, stop: Callable[[], None]) -> Callable[[], None]:
    """Register ``stop`` for the fixture ``name``; what it returns stops it unless that was done early."""
    _STOPS[name] = stop
    return lambda: _STOPS.pop(name, lambda: None)()


def _beside_the_sandbox_stopped() -> None:
    """What runs beside the sandbox (its Hadoop daemons, the old broker) stops before it, whatever the order."""
    for name in ("old_bootstrap", "hadoop"):
        _STOPS.pop(name, lambda: None)()


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected: a deselected test never ends a server
def pytest_collection_modifyitems(session, config, items):
    items[:] = session_order.order(items)
    _LAST_USERS.update(session_order.last_users(items, session_order.STOPPED_EARLY))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    for name in session_order.STOPPED_EARLY:
        if _LAST_USERS.get(name) == item.nodeid and name in _STOPS:
            _STOPS.pop(name)()
            reporter = item.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:  # in the run's log: which server went when
                reporter.write_line(f"\n{name} stopped: no test after {item.nodeid} needs it")


@pytest.fixture(autouse=True)
def _no_home(tmp_path_factory, monkeypatch):
    """Tests must not touch the user's home: HOME points at a throwaway folder."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory):
    from secure_mirror.sandbox import Sandbox

    # SECURE_MIRROR_TEST_SANDBOX=DIR reuses a running sandbox (faster while developing).
    reuse = os.environ.get("SECURE_MIRROR_TEST_SANDBOX")
    # Its brokers end a delegation token's session when the token expires, as production brokers with
    # connections.max.reauth.ms do: a client kept past its token's life must log in again or fail
    # (tests/integration/test_yarn_tokens.py); SCRAM alone, so the GSSAPI clients of the other tests are not asked.
    sb = (
        Sandbox.load(Path(reuse))
        if reuse
        else Sandbox.up(tmp_path_factory.mktemp("sandbox") / "sb", reauth_ms=SCRAM_REAUTH_MS, reauth_mechanisms=SCRAM)
    )
    # the tests' short Spark jobs start faster (tests/support/jvm_starts.py); SPARK_SUBMIT_OPTS set by hand wins
    if "SPARK_SUBMIT_OPTS" not in os.environ:
        options, JVM_STARTS[0] = jvm_starts.spark_submit_opts(sb, tmp_path_factory.mktemp("jvm-warm-up"))
        os.environ["SPARK_SUBMIT_OPTS"] = options
    stop = _stop_once("sandbox", lambda: _beside_the_sandbox_stopped() or (None if reuse else sb.down()))
    yield sb
    stop()


@pytest.fixture(scope="session")
def hadoop(sandbox):
    """The sandbox's kerberized HDFS and YARN, started once per session beside the brokers (or the running one of a
    reused sandbox started with ``--hadoop``)."""
    cluster = sandbox.hadoop()
    started = cluster is None
    if started:
        cluster = sandbox.start_hadoop()
    stop = _stop_once("hadoop", sandbox.stop_hadoop if started else lambda: None)
    yield cluster
    stop()


@pytest.fixture(scope="session")
def three_brokers(tmp_path_factory):
    """A second sandbox of three brokers a side (``sandbox up --brokers 3``), started at its first use and shared by
    the session's three-broker suites; SECURE_MIRROR_TEST_THREE_BROKERS=DIR reuses a running one. Its
    ``state["up_seconds"]`` says how long it took to start."""
    import time

    from secure_mirror.sandbox import Sandbox

    reuse = os.environ.get("SECURE_MIRROR_TEST_THREE_BROKERS")
    started = time.monotonic()
    sb = Sandbox.load(Path(reuse)) if reuse else Sandbox.up(tmp_path_factory.mktemp("three") / "sb", brokers=3)
    sb.state["up_seconds"] = round(time.monotonic() - started)
    with jvm_starts.quick_spark_starts(sb, lambda: tmp_path_factory.mktemp("jvm3")):  # as the sandbox fixture's
        stop = _stop_once(session_order.THREE_BROKERS, lambda: None if reuse else sb.down())
        yield sb
    stop()


@pytest.fixture(scope="session")
def old_bootstrap(sandbox):
    """The old broker's bootstrap (Kafka 2.2.2 with ZooKeeper): the running one of a sandbox started with
    ``--old-broker``, else one started at its first use and stopped at the session's end."""
    from secure_mirror.sandbox import old_broker

    running = old_broker.state(sandbox.base)
    if running is not None:
        yield running["bootstrap"]
        return
    bootstrap = old_broker.start(sandbox).bootstrap
    stop = _stop_once("old_bootstrap", lambda: old_broker.stop(sandbox.base))
    yield bootstrap
    stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report lists every random seed drawn so far (tests/support/seeds.py), to repeat the run."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and seeds.DRAWN:
        report.sections.append(("random seeds", "\n".join(seeds.DRAWN)))


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"spark-submit JVMs of the tests: {JVM_STARTS[0]}")
