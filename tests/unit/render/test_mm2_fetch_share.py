"""MirrorMaker 2's replication consumer fetches up to 16 MiB of a partition a request
(``secure_mirror.render.mm2.MM2_SOURCE_CONSUMER_DEFAULTS``), not Kafka's 1 MiB, at which a broker cuts a partition's
share mid record batch and the consumer fetches the cut batch again (benchmarks/NOTES.md section 24), unless
``source.client_options`` sets it. The job's source is not given it: the mirror's source sizes each task's share
itself (``SourceSettings.consumer``), and a key in its options would read as the profile's."""

from __future__ import annotations

import pytest

from secure_mirror.profile import load_profile
from secure_mirror.render import spark
from secure_mirror.render.mm2 import mm2_properties, mm2_settings
from tests.support import profiles as pf

KEY = "max.partition.fetch.bytes"


def _profile(tmp_path, given: int | None = None):
    data = pf.profile_data(tmp_path)
    if given is not None:
        data["source"].setdefault("client_options", {})[KEY] = given
    return load_profile(pf.write_profile(tmp_path, data))


def test_mirrormaker2s_replication_consumer_fetches_16_mib_a_partition_in_the_rendered_file(tmp_path):
    lines = mm2_properties(_profile(tmp_path), "mm2/mm2.properties").splitlines()
    assert [line for line in lines if KEY in line] == [f"src.consumer.{KEY}=16777216"]


@pytest.mark.parametrize("given", [1_048_576, 4_194_304])
def test_the_sources_client_options_win(tmp_path, given):
    settings, _notes = mm2_settings(_profile(tmp_path, given))
    # the side's own key, which MirrorMaker 2 applies to every client of the source; no consumer key overrides it
    assert {k: v for k, v in settings.items() if KEY in k} == {f"src.{KEY}": str(given)}


def test_the_jobs_source_is_left_to_size_its_share_itself(tmp_path):
    assert not [k for k in spark.source_options(_profile(tmp_path)) if KEY in k]
