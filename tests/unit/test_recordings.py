"""benchmarks/recordings.py's pure parts, fed stacks and compilations as the JDK's jfr tool prints them (its reading
of a real recording is in test_bench_harness.py)."""

from __future__ import annotations

import pytest

from benchmarks import recordings

KAFKA, SOURCE = "org.apache.kafka.clients.producer.", "securemirror.source."
JOB_SEND = [
    f"{KAFKA}internals.RecordAccumulator.append",
    f"{KAFKA}KafkaProducer.doSend",
    f"{KAFKA}KafkaProducer.send",
    "securemirror.sink.MirrorDataWriter.write",
]
SOURCE_HEADERS = [
    "java.util.HashMap.get",
    f"{SOURCE}HeaderArray.utf8",
    f"{SOURCE}HeaderArray.of",
    f"{SOURCE}SliceReader$Lane.row",
    f"{SOURCE}SliceReader.next",
]


def test_a_sample_counts_for_the_first_path_met_from_the_running_frame_down():
    assert recordings.path_of(JOB_SEND) == "the producer's send"  # not the sink that called it
    assert recordings.path_of(SOURCE_HEADERS) == "the source's rows: the headers"
    assert recordings.path_of(["SliceReader$Lane.row", "SliceReader.next"]) == "the source's rows: the row"
    assert recordings.path_of(["ClassicKafkaConsumer.pollForFetches", "ClassicKafkaConsumer.poll"]) == (
        "the consumer's poll"
    )
    projection = ["UnsafeRow.getBinary", "GeneratedClass$SpecificUnsafeProjection.apply", "MirrorDataWriter.write"]
    assert recordings.path_of(projection) == "Spark's projections"
    assert recordings.path_of(["Thread.run"]) == recordings.REST
    assert recordings.path_of([]) == recordings.REST


def test_the_split_counts_every_sample_once():
    stacks = [JOB_SEND, JOB_SEND, SOURCE_HEADERS, ["Executor$TaskRunner.run"]]
    counts = recordings.split(stacks)
    assert counts == {"the producer's send": 2, "the source's rows: the headers": 1, recordings.REST: 1}
    assert sum(counts.values()) == len(stacks)
    assert recordings.within(stacks, "HashMap.get") == 0.25
    assert recordings.within(stacks, "MirrorDataWriter") == 0.5
    assert recordings.within([], "anything") == 0.0


@pytest.mark.parametrize(
    ("printed", "expected"),
    [("PT0.000188592S", 0.000188592), ("PT1M2.5S", 62.5), ("PT2H", 7200.0), ("PT0S", 0.0)],
)
def test_durations_as_jfr_prints_them(printed, expected):
    assert recordings.seconds(printed) == pytest.approx(expected)


def test_a_duration_jfr_would_not_print_is_refused():
    with pytest.raises(ValueError, match="not a duration"):
        recordings.seconds("0.5 s")


def test_compilations_add_up_by_whose_code_was_compiled():
    compiled = [
        ("org.apache.kafka.clients.producer.internals.RecordAccumulator.partitionReady", "c2", 0.9),
        ("org.apache.kafka.common.Cluster.<init>", "c2", 0.25),
        ("securemirror.source.SliceReader.next", "c2", 0.5),
        ("java.util.HashMap.getNode", "c1", 0.125),
        ("org.codehaus.janino.TokenStreamImpl.peekRead", "c2", 0.1),
        ("py4j.StringUtil.unescape", "c2", 0.0625),
        ("Main.main", "c1", 0.5),
    ]
    assert recordings.compile_seconds(compiled) == {
        "Kafka's clients": pytest.approx(1.15),
        "the mirror's own": 0.5,
        "the JDK": 0.125,
        "org.codehaus.janino": 0.1,
        "py4j": 0.0625,
        "(no package)": 0.5,
    }
