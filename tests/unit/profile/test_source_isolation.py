"""How the source is read (``mirror.source_isolation_level``): read_committed unless the profile chooses otherwise,
exactly_once never with read_uncommitted, and no second place (client options, MirrorMaker 2's properties) to set it."""

from __future__ import annotations

import pytest

from secure_mirror.cli import main
from secure_mirror.errors import EXIT_BAD_INPUT
from secure_mirror.profile import ProfileError, load_profile
from tests.support.profiles import profile_data, write_profile

EXACTLY_ONCE_UNCOMMITTED = (
    "mirror.source_isolation_level: exactly_once mirrors what a read_committed reader of the source sees, and "
    "read_uncommitted would copy records of aborted source transactions as committed ones; drop "
    "mirror.source_isolation_level (read_committed), or set mirror.delivery.guarantee: at_least_once"
)
ONE_PLACE = (
    "the source's isolation level is mirror.source_isolation_level (the job, MirrorMaker 2, lag and verify read it "
    "from there); remove this key and set mirror.source_isolation_level (read_committed is the default)"
)


def problems_of(tmp_path, data: dict) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path, data))
    return caught.value.problems


@pytest.mark.parametrize(
    "mirror",
    [{}, {"delivery": {"guarantee": "exactly_once"}}, {"spark": {"trigger": "continuous"}}],
    ids=["at_least_once", "exactly_once", "continuous"],
)
def test_the_source_is_read_committed_by_default_in_every_guarantee_and_trigger(tmp_path, mirror):
    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path, **mirror)))
    assert profile.mirror.source_isolation_level == "read_committed"
    assert profile.mirror.source_consumer_settings == {"isolation.level": "read_committed"}


@pytest.mark.parametrize("trigger", ["micro_batch", "continuous"])
def test_read_uncommitted_is_a_choice_of_at_least_once(tmp_path, trigger):
    data = profile_data(tmp_path, source_isolation_level="read_uncommitted", spark={"trigger": trigger})
    profile = load_profile(write_profile(tmp_path, data))
    assert profile.mirror.source_consumer_settings == {"isolation.level": "read_uncommitted"}


def test_exactly_once_with_read_uncommitted_is_refused_with_the_fix(tmp_path, capsys):
    data = profile_data(tmp_path, source_isolation_level="read_uncommitted", delivery={"guarantee": "exactly_once"})
    assert problems_of(tmp_path, data) == [EXACTLY_ONCE_UNCOMMITTED]
    assert main(["validate", str(write_profile(tmp_path, data))]) == EXIT_BAD_INPUT
    assert EXACTLY_ONCE_UNCOMMITTED in capsys.readouterr().err
    data["mirror"]["source_isolation_level"] = "read_committed"  # said explicitly: accepted
    assert load_profile(write_profile(tmp_path, data)).mirror.delivery.exactly_once


def test_only_the_two_levels_kafka_knows(tmp_path):
    [problem] = problems_of(tmp_path, profile_data(tmp_path, source_isolation_level="READ_COMMITTED"))
    assert problem.startswith("mirror.source_isolation_level: ")


@pytest.mark.parametrize(
    ("where", "key"),
    [
        ("source.client_options", "isolation.level"),
        ("source.client_options", "ISOLATION.LEVEL"),  # Spark's option map ignores case
        ("source.client_options", "consumer.isolation.level"),  # MirrorMaker 2 would apply it as src.consumer.*
        ("mirror.mm2.properties", "src.consumer.isolation.level"),  # what MirrorSourceTask's consumer applies
    ],
)
def test_no_other_place_sets_the_source_isolation_level(tmp_path, where, key):
    data = profile_data(tmp_path)
    if where == "source.client_options":
        data["source"]["client_options"] = {key: "read_uncommitted"}
    else:
        data["mirror"]["mm2"] = {"properties": {key: "read_uncommitted"}}
    assert problems_of(tmp_path, data) == [f"{where}.{key}: {ONE_PLACE}"]


def test_the_targets_consumers_are_not_the_sources(tmp_path):
    data = profile_data(tmp_path, mm2={"properties": {"tgt.consumer.isolation.level": "read_uncommitted"}})
    data["target"]["client_options"] = {"isolation.level": "read_uncommitted"}  # no reader of the source
    assert load_profile(write_profile(tmp_path, data)).mirror.source_isolation_level == "read_committed"
