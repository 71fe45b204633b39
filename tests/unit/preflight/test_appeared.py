"""``kafka_admin.topics.described_again``, and the judgement of what it leaves: a topic the description did not find
that the broker then says exists appeared between pre-flight's two questions (a running mirror creating its
checkpoints topic); it is described again, fed scripted answers here, and judged as the topic it is, not as one hidden
from the identity. One never described is unverified, not a DESCRIBE grant missing."""

from __future__ import annotations

from secure_mirror.preflight.checks import groups
from secure_mirror.preflight.model import FAIL, PASS, UNVERIFIED
from secure_mirror.preflight.probes.kafka_admin.topics import EXISTS, REFUSED_TOPIC, described_again
from secure_mirror.render import acls
from tests.support import profiles as pf

MAP, CHECKPOINTS = "secure_mirror.offset-map.src.internal", "src.checkpoints.internal"
ABSENT = {"error": "UNKNOWN_TOPIC_OR_PART"}
FOUND = {"partitions": 1, "operations": ["DESCRIBE", "READ", "WRITE"]}


class Asker:
    """Answers each question with the next of ``rounds`` (name -> answer), the last one from then on."""

    def __init__(self, *rounds: dict):
        self.rounds, self.asked = list(rounds), []

    def __call__(self, names: list[str]) -> dict:
        self.asked.append(sorted(names))
        answers = self.rounds[min(len(self.asked), len(self.rounds)) - 1]
        return {n: answers[n] for n in names}


def test_a_topic_created_between_the_questions_is_described_again_and_judged_as_found(tmp_path):
    described, created = {MAP: FOUND, CHECKPOINTS: ABSENT}, {CHECKPOINTS: EXISTS}
    asker = Asker({CHECKPOINTS: ABSENT}, {CHECKPOINTS: FOUND})
    again, left = described_again(asker, described, created, seconds=5, pause=0)
    assert asker.asked == [[CHECKPOINTS], [CHECKPOINTS]]
    assert again == {MAP: FOUND, CHECKPOINTS: FOUND} and left == {}
    assert described == {MAP: FOUND, CHECKPOINTS: ABSENT}, "the caller's answers are not changed in place"
    profile = pf.load(tmp_path, groups={"include": "app\\.orders"})
    plan = acls.target_acls(profile)
    assert groups.group_topics_check(plan, again, left).status == PASS


def test_only_topics_found_existing_and_not_refused_are_asked_again():
    described = {"new": ABSENT, "hidden": {"error": REFUSED_TOPIC}, "there": FOUND}
    created = {"new": None, "hidden": EXISTS}
    asker = Asker({})
    assert described_again(asker, described, created, seconds=5, pause=0) == (described, created)
    assert asker.asked == []


def test_a_topic_never_found_stays_existing_and_undescribed_after_the_time_given():
    described, created = {CHECKPOINTS: ABSENT}, {CHECKPOINTS: EXISTS}
    asker = Asker({CHECKPOINTS: ABSENT})
    again, left = described_again(asker, described, created, seconds=0.2, pause=0.05)
    assert (again, left) == (described, created)
    assert 2 <= len(asker.asked) <= 10


def test_a_topic_refused_on_the_second_question_is_not_asked_a_third_time():
    described, created = {CHECKPOINTS: ABSENT}, {CHECKPOINTS: EXISTS}
    asker = Asker({CHECKPOINTS: {"error": REFUSED_TOPIC}})
    again, left = described_again(asker, described, created, seconds=5, pause=0)
    assert again == {CHECKPOINTS: {"error": REFUSED_TOPIC}} and left == created
    assert len(asker.asked) == 1


def test_a_topic_that_exists_but_is_never_described_is_unverified_not_a_missing_describe_grant(tmp_path):
    """The brokers' answers once asking gave up (a partition without a leader, say): the topic exists, the
    identity's DESCRIBE is not known, and no grant is named as missing; a refused description still fails."""
    profile = pf.load(tmp_path, groups={"include": "app\\.orders"})
    plan = acls.target_acls(profile)
    never = {MAP: FOUND, CHECKPOINTS: {"error": "LEADER_NOT_AVAILABLE"}}
    judged = groups.group_topics_check(plan, never, {CHECKPOINTS: EXISTS})
    assert (judged.status, judged.details, judged.acls) == (UNVERIFIED, {"resources": [CHECKPOINTS]}, [])
    assert judged.finding == (
        f"1 topic(s) exist but the brokers did not describe them ({CHECKPOINTS}: LEADER_NOT_AVAILABLE); "
        "whether User:mirror may DESCRIBE them is not known"
    )
    refused = groups.group_topics_check(plan, {**never, CHECKPOINTS: {"error": REFUSED_TOPIC}}, {CHECKPOINTS: EXISTS})
    assert refused.status == FAIL and refused.finding.startswith(f"User:mirror may not DESCRIBE {CHECKPOINTS}")
