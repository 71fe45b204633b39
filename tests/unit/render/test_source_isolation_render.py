"""Every reader of the source reads it at the profile's isolation level (``Mirror.source_consumer_settings``): the
job's Spark source in every guarantee and trigger, MirrorMaker 2's replication consumer, and lag and verify."""

from __future__ import annotations

import pytest

from secure_mirror.profile import load_profile
from secure_mirror.render import spark
from secure_mirror.render.mm2 import mm2_settings
from secure_mirror.run.clients import inspection
from tests.support import profiles as pf

MODES = {
    "at_least_once": {},
    "exactly_once": {"delivery": {"guarantee": "exactly_once"}},
    "continuous": {"spark": {"trigger": "continuous"}},
    "read_uncommitted": {"source_isolation_level": "read_uncommitted"},
    "continuous, read_uncommitted": {"source_isolation_level": "read_uncommitted", "spark": {"trigger": "continuous"}},
}


def _profile(tmp_path, mode: str):
    return load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path, **MODES[mode])))


def _level(mode: str) -> str:
    return "read_uncommitted" if "read_uncommitted" in mode else "read_committed"


@pytest.mark.parametrize("mode", MODES)
def test_the_jobs_source_reads_at_the_profiles_level(tmp_path, mode):
    options = spark.source_options(_profile(tmp_path, mode))
    assert {k: v for k, v in options.items() if "isolation" in k.lower()} == {"kafka.isolation.level": _level(mode)}


@pytest.mark.parametrize("mode", MODES)
def test_mirrormaker2s_replication_consumer_reads_at_the_profiles_level(tmp_path, mode):
    """``<source alias>.consumer.*`` is what MirrorMakerConfig turns into the flow's ``source.consumer.*``, which
    MirrorSourceTask's replication consumer applies (checked against Kafka 4.2.0's own classes); a top-level
    ``source.consumer.*`` is not applied."""
    settings, _notes = mm2_settings(_profile(tmp_path, mode))
    assert {k: v for k, v in settings.items() if "isolation" in k} == {"src.consumer.isolation.level": _level(mode)}


@pytest.mark.parametrize("mode", ["at_least_once", "read_uncommitted"])
def test_lag_and_verify_read_the_source_as_the_job_does_and_the_target_read_committed(tmp_path, mode):
    with inspection(_profile(tmp_path, mode)) as clients:
        assert clients.identity("source").conf["isolation.level"] == _level(mode)
        assert "isolation.level" not in clients.identity("target").conf  # librdkafka's default: read_committed
