"""The readers a cut-over hands its one set of identities to (pre-flight, ``lag``, ``lag_heartbeat``, the groups'
``Session``, ``verify``) take an optional ``identities``, as httpx's client takes a transport: given, they ask through
it, open no folder of their own and leave it open; not given, each opens a set of its own and closes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secure_mirror.identities import Identities, IdentityFolder
from secure_mirror.preflight import run_preflight
from secure_mirror.run.clients import EndOffsets
from secure_mirror.run.groups.session import Session
from secure_mirror.run.lag import lag, lag_heartbeat
from secure_mirror.verify.compare import verify
from tests.support import profiles as pf


class Asked(Exception):
    """Raised by a stand-in where the real one would talk to a cluster: the reader got that far through it."""


class Answering:
    """A set of identities in memory: ``answers`` by the name of the function asked; records what was asked."""

    krb5_config = None  # pre-flight reads it first

    def __init__(self, **answers):
        self.answers, self.asked = answers, []

    def call(self, side, fn, *args, who="mirror", **kwargs):
        self.asked.append((side, fn.__name__, who))
        answer = self.answers.get(fn.__name__, Asked)
        if answer is Asked:
            raise Asked(fn.__name__)
        return answer

    def process(self, side, who="mirror"):
        self.asked.append((side, "process", who))
        raise Asked("process")


@pytest.fixture
def folders_opened(monkeypatch):
    opened: list[IdentityFolder] = []
    real_init = IdentityFolder.__init__

    def counted(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(IdentityFolder, "__init__", counted)
    return opened


def _committed(profile, offsets: dict) -> None:
    folder = profile.mirror.checkpoint_location
    for name, text in (("offsets/0", 'v1\n{"batchWatermarkMs":0}\n' + json.dumps(offsets)), ("commits/0", "v1\n{}")):
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_lag_and_the_heartbeat_ask_through_the_identities_given(tmp_path, folders_opened):
    profile = pf.load(tmp_path)
    given = Answering(end_offsets=EndOffsets({("orders.eu", 0): (0, 5)}), newest_heartbeat={"newest": None})
    rows = lag(profile, identities=given)
    beat = lag_heartbeat(profile, identities=given)
    assert [(r.topic, r.log_end) for r in rows] == [("orders.eu", 5)]
    assert beat is not None and beat.newest_ms is None
    assert [(side, name) for side, name, _ in given.asked] == [
        ("source", "end_offsets"),
        ("target", "newest_heartbeat"),
    ]
    assert folders_opened == []


def test_the_session_and_verify_ask_through_the_identities_given(tmp_path, folders_opened):
    profile = pf.load(tmp_path)
    given = Answering(read_map=([], {}, 0))
    with Session(profile, identities=given) as session:
        session.read_map()
    _committed(profile, {"orders.eu": {"0": 5}})
    with pytest.raises(Asked, match="end_offsets"):
        verify(profile, identities=given)  # its first question, asked of the set given
    assert [name for _, name, _ in given.asked] == ["read_map", "end_offsets"]
    assert folders_opened == []


def test_preflight_runs_its_workers_in_the_identities_given(tmp_path, folders_opened):
    profile = pf.load(tmp_path)
    given = Answering()
    with pytest.raises(Asked, match="process"):
        run_preflight(profile, identities=given)
    assert given.asked[:1] == [("source", "process", "mirror")] and folders_opened == []


def test_without_identities_each_reader_opens_a_set_of_its_own_and_closes_it(tmp_path, folders_opened, monkeypatch):
    profile = pf.load(tmp_path)
    answers = {"end_offsets": EndOffsets({}), "newest_heartbeat": {"newest": None}, "read_map": ([], {}, 0)}
    monkeypatch.setattr(Identities, "call", lambda self, side, fn, *args, **kwargs: answers[fn.__name__])
    lag(profile)
    lag_heartbeat(profile)
    with Session(profile) as session:
        session.read_map()
    assert len(folders_opened) == 3 and not any(folder.path.exists() for folder in folders_opened)
