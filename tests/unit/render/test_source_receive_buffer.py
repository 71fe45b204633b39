"""The mirror's Java consumers of the source leave their socket's receive buffer to the OS
(``receive.buffer.bytes: -1``, ``secure_mirror.profile.models.SOURCE_JAVA_CONSUMER_DEFAULTS``) unless
``source.client_options`` sets it: the job's source in every guarantee, trigger and source, and MirrorMaker 2's
replication consumer. The target's clients and the librdkafka readers (lag, verify) do not get it."""

from __future__ import annotations

import pytest

from secure_mirror.profile import load_profile
from secure_mirror.render import spark
from secure_mirror.render.mm2 import mm2_properties, mm2_settings
from secure_mirror.run.clients import inspection
from tests.support import profiles as pf

MODES = {
    "at_least_once": {},
    "exactly_once": {"delivery": {"guarantee": "exactly_once"}},
    "continuous": {"spark": {"trigger": "continuous"}},
    "spark's kafka source": {"spark": {"source": "kafka"}},
}


def _profile(tmp_path, mode: str = "at_least_once", receive_buffer: int | None = None):
    data = pf.profile_data(tmp_path, **MODES[mode])
    if receive_buffer is not None:
        data["source"].setdefault("client_options", {})["receive.buffer.bytes"] = receive_buffer
    return load_profile(pf.write_profile(tmp_path, data))


def _buffers(settings: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in settings.items() if "buffer.bytes" in k}


@pytest.mark.parametrize("mode", MODES)
def test_the_jobs_source_leaves_its_receive_buffer_to_the_os(tmp_path, mode):
    profile = _profile(tmp_path, mode)
    assert _buffers(spark.source_options(profile)) == {"kafka.receive.buffer.bytes": "-1"}
    assert _buffers(spark.sink_options(profile)) == {}


def test_mirrormaker2s_replication_consumer_leaves_it_to_the_os_in_the_rendered_file(tmp_path):
    lines = mm2_properties(_profile(tmp_path), "mm2/mm2.properties").splitlines()
    assert [line for line in lines if "buffer.bytes" in line] == ["src.consumer.receive.buffer.bytes=-1"]


@pytest.mark.parametrize("given", [65536, 4194304])
def test_the_sources_client_options_win(tmp_path, given):
    profile = _profile(tmp_path, receive_buffer=given)
    assert _buffers(spark.source_options(profile)) == {"kafka.receive.buffer.bytes": str(given)}
    settings, _notes = mm2_settings(profile)
    # the side's own key, which MirrorMaker 2 applies to every client of the source; no consumer key overrides it
    assert _buffers(settings) == {"src.receive.buffer.bytes": str(given)}


def test_the_librdkafka_readers_are_not_given_the_java_name(tmp_path):
    """librdkafka calls it socket.receive.buffer.bytes, 0 (the OS's) by default, and refuses unknown names."""
    with inspection(_profile(tmp_path)) as clients:
        for side in ("source", "target"):
            assert _buffers(clients.identity(side).conf) == {}
