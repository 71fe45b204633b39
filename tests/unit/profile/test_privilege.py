"""Least privilege no profile can widen (README, Security model): no wildcard principal, no grant covering an internal
or reserved topic unless the profile opts in, every target name legal. Each case of issue 25 as a unit test, then the
rule as a property over generated profiles: every binding of every plan render writes is checked by an independent
reading of the rule (not by ``acls.binding_problems``, which render itself asks): TOPIC '*' only for a ``.*`` include
the profile opted into (``grant_all_topics``), and every other TOPIC binding, opted in or not, covering no internal or
reserved name, among them those MirrorMaker 2 and the sink name after the drawn aliases, written as Kafka 4.2 names them
(``_reserved``), not read from profile/mm2_topics.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from secure_mirror.cli import main
from secure_mirror.profile import TopicSelection
from secure_mirror.profile.loader import format_problem
from secure_mirror.profile.models import Profile
from secure_mirror.profile.redaction import plan_redaction
from secure_mirror.profile.topics import classify, target_name_problem
from secure_mirror.render import acls
from secure_mirror.render.spark import spark_conf
from secure_mirror.render.tree import render_files
from secure_mirror.run.job.outcome import JobRefused
from secure_mirror.run.job.planning import TopicPlanner
from tests.support import seeds
from tests.support.profiles import gssapi, load, oauth, password, profile_data, write_profile
from tests.unit.profile.test_profile import problems_of

# -- everyone becomes the mirror: refused wherever '*' can arise ------------------------------------------------


def test_a_wildcard_kafka_principal_is_refused(tmp_path):
    data = profile_data(tmp_path)
    data["source"]["sasl"]["kafka_principal"] = "User:*"
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith("source.sasl.kafka_principal: the principal holds '*'")
    assert "every user of the cluster would get the mirror's grants" in problem


@pytest.mark.parametrize("name", ["*", "mirror*", "a*b"])
def test_a_scram_username_holding_a_star_is_refused(tmp_path, name):
    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512"))
    data["target"]["sasl"]["username"] = name
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith(f"target.sasl.username: the principal the brokers see (User:{name}, from sasl.username)")


def test_an_oauth_client_id_star_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", "s3cret")
    data = profile_data(tmp_path, source=oauth(tmp_path, "source"))
    data["source"]["sasl"]["client_id"] = "*"
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith("source.sasl.client_id: the principal the brokers see (User:*, from sasl.client_id)")


def test_a_principal_to_local_rule_mapping_to_star_is_refused(tmp_path):
    data = profile_data(tmp_path)
    data["source"]["principal_mapping"] = {"principal_to_local_rules": ["RULE:[2:$1/$2@$0](.*)s/.*/*/", "DEFAULT"]}
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith(
        "source.principal_mapping.principal_to_local_rules: the principal the brokers see (User:*, from "
        "mirror/mirror.source.test@SOURCE.TEST by the principal-to-local rules) holds '*'"
    )


# -- internal and reserved topics ---------------------------------------------------------------------------------


def test_all_topics_is_refused_without_the_key_and_says_how(tmp_path):
    data = profile_data(tmp_path)
    data["mirror"]["topics"] = {"include": ".*"}
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith("mirror.topics.include: .* selects every topic, and its ACLs would grant on TOPIC '*'")
    assert "set mirror.topics.grant_all_topics: true" in problem


def test_all_topics_with_the_key_grants_on_star_and_says_so(tmp_path):
    profile = load(tmp_path, topics={"include": ".*", "grant_all_topics": True}, rename={"rule": "identity"})
    source, target = acls.source_acls(profile), acls.target_acls(profile)
    assert {(b.resource_name, b.pattern_type) for b in source.bindings if b.resource_type == "TOPIC"} == {
        ("*", "LITERAL")
    }
    assert {
        (b.resource_name, b.pattern_type)
        for b in target.bindings
        if b.resource_type == "TOPIC" and b.resource_name not in target.own_topics  # heartbeats: its own, by name
    } == {("*", "LITERAL")}
    manifest = {f.path: f.content for f in render_files(profile, tmp_path / "out")}["MANIFEST.md"]
    assert "every topic, Kafka's internal topics included (\\_\\_consumer\\_offsets" in manifest


@pytest.mark.parametrize(
    ("include", "why"),
    [
        ("__.*", "selects only topics that are never mirrored (Kafka's internal topics"),
        ("__consumer_offsets", "names a topic that is never mirrored (Kafka's internal topics"),
        ("_schemas", "names a topic that is never mirrored (Schema Registry's"),
        ("heartbeats", "names a topic that is never mirrored (mirrors' heartbeats topics)"),
        ("mm2-offset-syncs\\.tgt\\.internal", "names a topic that is never mirrored (MirrorMaker 2's internal"),
    ],
)
def test_a_selection_of_internal_topics_is_refused(tmp_path, include, why):
    data = profile_data(tmp_path)
    data["mirror"]["topics"] = {"include": include}
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith(f"mirror.topics.include: {include} {why}"), problem


def test_a_prefix_covering_internal_topics_gets_no_prefixed_grant(tmp_path):
    profile = load(tmp_path, topics={"include": "_.*,h.*,orders\\..*"}, rename={"rule": "identity"})
    for plan in (acls.source_acls(profile), acls.target_acls(profile)):
        topics = {
            (b.resource_name, b.pattern_type)
            for b in plan.bindings
            if b.resource_type == "TOPIC" and b.resource_name not in plan.own_topics  # heartbeats: by its name
        }
        assert topics == {("orders.", "PREFIXED")}
        assert [(u.pattern, u.reason) for u in plan.unresolved] == [
            ("_.*", "would be a PREFIXED grant on '_', which also covers internal or reserved topics"),
            ("h.*", "would be a PREFIXED grant on 'h', which also covers internal or reserved topics"),
        ]
    script = {f.path: f.content for f in render_files(profile, tmp_path / "out")}["acls/apply-acls.sh"]
    assert "# Pattern _.* would be a PREFIXED grant on '_', which also covers internal or reserved topics" in script


def test_a_prefix_covering_the_mirrors_offset_maps_gets_no_grant(tmp_path):
    """Every mirror's offset map starts with ``secure_mirror.offset-map.``, whatever its alias: a grant on ``s`` would let
    this identity write the offset maps of the other mirrors onto the same cluster (the property test found it)."""
    profile = load(tmp_path, topics={"include": "s.*,secure_mirror\\..*,sales.*"}, rename={"rule": "identity"})
    for plan in acls.all_plans(profile).values():
        assert {
            (b.resource_name, b.pattern_type)
            for b in plan.bindings
            if b.resource_type == "TOPIC" and b.resource_name not in plan.own_topics  # MirrorMaker 2's: by name
        } == {("sales", "PREFIXED")}
        assert [(u.pattern, u.reason) for u in plan.unresolved] == [
            ("s.*", "would be a PREFIXED grant on 's', which also covers internal or reserved topics"),
            (
                "secure_mirror\\..*",
                "would be a PREFIXED grant on 'secure_mirror.', which also covers internal or reserved topics",
            ),
        ]
    manifest = {f.path: f.content for f in render_files(profile, tmp_path / "out")}["MANIFEST.md"]
    assert (
        "include s.\\* would be a PREFIXED grant on 's', which also covers internal or reserved topics: no grant "
        "rendered; pre-flight lists the topics it selects, each to be granted by name (LITERAL)"
    ) in manifest


def test_a_target_prefix_covering_mirrormaker2s_checkpoints_gets_no_grant(tmp_path):
    """``c.*`` renamed with alias_prefix is ``src.c*`` on the target, which covers ``src.checkpoints.internal``."""
    profile = load(tmp_path, topics={"include": "c.*"})
    assert [u.pattern for u in acls.target_acls(profile).unresolved] == ["c.*"]
    assert [u.pattern for u in acls.source_acls(profile).unresolved] == ["c.*"]  # connect-configs ...


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("__{topic}", "which is reserved: Kafka's internal topics"),
        ("{topic}.internal", "which is reserved: MirrorMaker 2's internal topics"),
    ],
)
def test_a_rename_onto_a_reserved_name_is_refused(tmp_path, template, why):
    data = profile_data(tmp_path)
    data["mirror"]["rename"] = {"rule": "template", "template": template}
    problem = problems_of(tmp_path, data)[0]
    assert problem.startswith("mirror.topics.include: orders.* can be mirrored as short as "), problem
    assert why in problem


def test_a_long_alias_is_refused_at_validate(tmp_path):
    data = profile_data(tmp_path)
    data["source"]["alias"] = "a" * 249
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith(f"mirror.topics.include: orders.* can be mirrored as short as {'a' * 80}")
    assert "is 257 characters long, and Kafka's limit is 249" in problem


def test_a_long_literal_under_alias_prefix_is_refused(tmp_path):
    data = profile_data(tmp_path)
    data["mirror"]["topics"] = {"include": "t" * 247}
    [problem] = problems_of(tmp_path, data)
    assert "is mirrored as src.ttt" in problem and "is 251 characters long" in problem


def test_the_job_never_selects_what_mirrormaker2_excludes():
    selection = TopicSelection.parse("(?:.*)")  # a regex: no ACL issue, only the job's selection
    never = [
        "__consumer_offsets",
        "__transaction_state",
        "_schemas",
        "_confluent-metrics",
        "mm2-offset-syncs.tgt.internal",
        "src.checkpoints.internal",
        "mm2-configs.src.internal",
        "heartbeats",
        "src.heartbeats",
        "connect-configs",
        "connect-offsets",
        "connect-status",
        "orders.replica",
        ".hidden",
    ]
    assert [t for t in never if selection.matches(t)] == []
    assert selection.select(["orders", "orders.internalish", "payments-v1", "_private"]) == [
        "_private",
        "orders",
        "orders.internalish",
        "payments-v1",
    ]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("ok.name-1_", None),
        ("x" * 249, None),
        ("x" * 250, "is 250 characters long, and Kafka's limit is 249"),
        ("..", "is '..', which Kafka refuses as a topic name"),
        ("a b", "holds characters Kafka refuses in a topic name (only letters, digits, '.', '_' and '-')"),
        ("__x", "is reserved: Kafka's internal topics (__consumer_offsets, __transaction_state, ...)"),
        ("", "is empty"),
    ],
)
def test_one_rule_decides_a_target_name(name, problem):
    assert target_name_problem(name) == problem


def test_the_job_refuses_a_topic_its_rename_makes_too_long():
    planner = object.__new__(TopicPlanner)  # no JVM: the name is judged before any cluster is asked
    planner.pieces, planner.keep = ["src.", ""], {}
    with pytest.raises(JobRefused, match="is 253 characters long, and Kafka's limit is 249; exclude it"):
        planner.plan({"t" * 249})


def test_validate_exits_2_naming_the_field(tmp_path, capsys):
    data = profile_data(tmp_path)
    data["source"]["sasl"]["kafka_principal"] = "User:*"
    assert main(["validate", str(write_profile(tmp_path, data))]) == 2
    assert "source.sasl.kafka_principal: the principal holds '*'" in capsys.readouterr().err


# -- the rule as a property over generated profiles -----------------------------------------------------------------

SEED = seeds.draw_seed("hypothesis @seed of the privilege property")
print(f"test_privilege: seed {SEED} (repeat with SECURE_MIRROR_SEED={SEED})", file=sys.stderr)

LEGAL = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
FIELD = re.compile(r"^(source|target|mirror)\.[A-Za-z_.0-9-]+: ")  # a message that names its field
# Names an independent reader of the rule knows as internal or reserved on either side (beside any starting with '__'),
# whatever the aliases; those named after the drawn aliases are made by _reserved.
KNOWN_RESERVED = [
    "__consumer_offsets",
    "__transaction_state",
    "_schemas",
    "_confluent-command",
    "heartbeats",
    "connect-configs",
    "connect-offsets",
    "connect-status",
    "mm2-offset-syncs.tgt.internal",
    ".hidden",
    "secure_mirror.offset-map.other.internal",  # another mirror's offset map on the same cluster (docs/offset-map.md)
]
PIECES = [
    ".*",
    "_.*",
    "__.*",
    "__consumer_offsets",
    "_schemas",
    "heartbeats",
    "orders",
    "orders\\..*",
    "o.*",
    "h.*",
    "c.*",
    "m.*",
    "\\..*",
    "connect-.*",
    "(eu|us)\\.sales",
    "payments-v[0-9]+",
    "src\\.checkpoints\\.internal",
    "s.*",
    "secure_mirror\\..*",
]
RULES = [
    "DEFAULT",
    "RULE:[2:$1@$0](.*)s/@.*//",
    "RULE:[2:$1](.*)s/.*/*/",
    "RULE:[2:*]",
    "RULE:[2:$1-$2](.*)s/[.]/_/g",
    "RULE:[2:$1](mir.*)s/r/*/",
]
TEMPLATES = [
    "__{topic}",
    "{topic}.internal",
    "m.{topic}",
    "{source_alias}_{topic}",
    "{topic}.copy",
    "_{topic}",
    "{topic}",
]
# Identities, half of them without '*', which is refused wherever it appears: so that enough profiles render for the
# TOPIC grants to be judged, beside the refusals.
names = st.text(alphabet="ab-_.", min_size=1, max_size=6) | st.text(alphabet="ab*-_.", min_size=1, max_size=6)
EVIL = "com.example.Evil"  # a class no setting of the profile may name
# Kafka client options and mm2.properties lines: classes Kafka ships (accepted) and others (refused), after prefixes.
CLIENT_OPTIONS = [
    ("partitioner.class", EVIL),
    ("producer.partitioner.class", "org.apache.kafka.clients.producer.RoundRobinPartitioner"),
    ("consumer.partition.assignment.strategy", f"org.apache.kafka.clients.consumer.RangeAssignor,{EVIL}"),
    ("tgt.value.converter", EVIL),
    ("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"),
    ("header.converter", EVIL),
    ("replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"),
    ("linger.ms", "5"),
]
SECRET_DEFAULT = "(?i)secret|password|token|access[.]?key"  # Spark 4.0's spark.redaction.regex
SPARK_CONF = [
    ("spark.redaction.regex", "(?i)secret"),
    ("spark.redaction.regex", f"{SECRET_DEFAULT}|passphrase"),
    ("spark.sql.redaction.options.regex", "(?i)jdbc"),
    ("spark.sql.redaction.options.regex", "(?i)url|jdbc"),
    ("spark.sql.redaction.string.regex", "customer-[0-9]+"),
    ("spark.sql.redaction.string.regex", "(?x)customer # ids"),
    ("spark.redaction.string.regex", "(x"),
    ("spark.redaction.string.regex", "db\\.password=[^,\\s]*"),
    ("spark.driver.extraJavaOptions", "-Dspark.redaction.regex=(?i)token"),
    ("spark.executor.extraJavaOptions", f"-Dspark.redaction.regex={SECRET_DEFAULT}"),
    ("spark.plugins", EVIL),
    ("spark.extraListeners", EVIL),
    ("spark.executor.extraLibraryPath", "/tmp/lib"),
    ("spark.sql.extensions", EVIL),
    ("spark.executor.memory", "1g"),
]
# An independent reading of what Spark's redaction must still find: (setting, texts it must match).
MUST_REDACT = {
    "spark.redaction.regex": ["password", "PASSWORD", "secret", "token", "access.key", "accesskey"],
    "spark.sql.redaction.options.regex": ["url", "URL"],
}
PLANS = [  # plan strings whose secrets the job's own plan redaction hides
    "kafka.ssl.truststore.password=s3cret, kafka.bootstrap.servers=b:9093",
    "ssl.keystore.key=-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
]
# Spark settings that load code (spark.*.extraClassPath is warned about, not refused: secure_mirror/sandbox/sink_jar.py).
SPARK_CODE = ("spark.plugins", "spark.extraListeners", "spark.executor.extraLibraryPath", "spark.sql.extensions")
# mirror.groups include pieces: literal ids and prefixes (granted as written), and what no grant may express.
GROUP_PIECES = [
    "app\\.orders",
    "billing",
    "app\\..*",
    "a.*",
    "c.*",
    "_.*",
    ".*",
    "app.orders",
    "(eu|us)-readers",
    "\\*",
    "x\\*.*",
    "secure-mirror-x",
    "console-consumer-1",
]


@st.composite
def generated(draw, tmp):
    data = profile_data(tmp)
    for side in ("source", "target"):
        kind = draw(st.sampled_from(["gssapi", "scram", "oauth"]))
        cluster = gssapi(tmp, side) if kind == "gssapi" else password(tmp, side, "SCRAM-SHA-512")
        if kind == "gssapi":
            realm = f"{side.upper()}.TEST"
            cluster["sasl"]["principal"] = f"{draw(names)}/host@{realm}"
            rules = draw(st.lists(st.sampled_from(RULES), min_size=1, max_size=3))
            cluster["principal_mapping"] = {"principal_to_local_rules": rules}
        elif kind == "scram":
            cluster["sasl"]["username"] = draw(names)
        else:
            cluster["sasl"] = {
                "mechanism": "OAUTHBEARER",
                "client_id": draw(names),
                "client_secret": "env:SM_TEST_CLIENT_SECRET",
                "token_endpoint_url": "https://idp.example.com/token",
            }
        if draw(st.booleans()) and draw(st.booleans()):
            cluster["sasl"]["kafka_principal"] = f"User:{draw(names)}"
        cluster["alias"] = draw(st.sampled_from(["src", "tgt", "s-1", "a-b", "b-c", "a" * draw(st.integers(1, 250))]))
        data[side] = cluster
    if data["source"]["alias"] == data["target"]["alias"]:
        data["target"]["alias"] += "x"
    literal = "l" * draw(st.integers(1, 249))
    under_alias = re.escape(data["source"]["alias"][: draw(st.integers(1, 4))]) + ".*"  # the alias's names' starts
    pieces = draw(st.lists(st.sampled_from([*PIECES, literal, under_alias]), min_size=1, max_size=3))
    grant_all = draw(st.booleans())
    pieces += [".*"] if grant_all and draw(st.booleans()) else []  # opted in: often for every topic, under each rename
    data["mirror"]["topics"] = {"include": ",".join(pieces), "grant_all_topics": grant_all}
    if draw(st.integers(0, 2)) == 0:
        pieces = draw(st.lists(st.sampled_from(GROUP_PIECES), min_size=1, max_size=2))
        data["mirror"]["groups"] = {"include": ",".join(pieces)}
    rule = draw(st.sampled_from(["identity", "alias_prefix", "template"]))
    data["mirror"]["rename"] = {
        "rule": rule,
        **({"template": draw(st.sampled_from(TEMPLATES))} if rule == "template" else {}),
    }
    return data


def _group_grants(profile: Profile) -> set[tuple[str, str]]:
    """(name, pattern) of every GROUP binding the job's plans may hold, read independently: the mirror's own prefix,
    MirrorMaker 2's worker group and, with mirror.groups, each include piece as written."""
    written = [alias.replace("-", ".") for alias in (profile.source.alias, profile.target.alias)]  # no '-' inside
    own = {(f"secure-mirror-{written[0]}-{written[1]}-", "PREFIXED")}  # the '-' ends it: a/b does not cover a/bc
    own.add((f"{profile.source.alias}-mm2", "LITERAL"))
    for piece in (profile.mirror.groups.include or "").split(","):
        piece = piece.strip()
        if piece.endswith(".*"):
            own.add((re.sub(r"\\(.)", r"\1", piece[:-2]), "PREFIXED"))
        elif piece:
            own.add((re.sub(r"\\(.)", r"\1", piece), "LITERAL"))
    return own


def _sync_topics(profile: Profile) -> set[str]:
    alias = profile.source.alias
    if not profile.mirror.groups.include:
        return set()
    return {f"secure_mirror.offset-map.{alias}.internal", f"{alias}.checkpoints.internal"}


def _separators(profile: Profile) -> tuple[str, str]:
    """DefaultReplicationPolicy's separator (the rendered mm2.properties sets it from a rename
    ``{source_alias}<sep>{topic}``; else '.', IdentityReplicationPolicy's) and its internal topics' separator (the
    same unless replication.policy.internal.topic.separator.enabled, read with Boolean.parseBoolean, is false)."""
    template = profile.mirror.rename.template_text
    sep = template[len("{source_alias}") : -len("{topic}")] if template.startswith("{source_alias}") else ""
    sep = sep if sep and "{" not in sep and template.endswith("{topic}") else "."
    enabled = str(profile.mirror.mm2.properties.get("replication.policy.internal.topic.separator.enabled", "true"))
    return sep, sep if enabled.lower() == "true" else "."


def _mm2_names(profile: Profile) -> dict[str, set[str]]:
    """side -> the topics MirrorMaker 2 keeps there for the flow, named after the drawn aliases as Kafka 4.2 names them,
    read independently of profile/mm2_topics.py: DefaultReplicationPolicy's heartbeatsTopic, checkpointsTopic(source)
    and offsetSyncsTopic(target) (IdentityReplicationPolicy inherits them), on the side offset-syncs.topic.location
    names (source by default); MirrorMakerConfig's dedicated-mode Connect topics mm2-{configs,offsets,status}.<source
    alias>.internal, always with '.'."""
    source, target = profile.source.alias, profile.target.alias
    _, inner = _separators(profile)
    names: dict[str, set[str]] = {
        "source": set(),
        "target": {"heartbeats", f"{source}{inner}checkpoints{inner}internal"},
    }
    names["target"] |= {f"mm2-{kind}.{source}.internal" for kind in ("configs", "offsets", "status")}
    syncs = str(profile.mirror.mm2.properties.get("offset-syncs.topic.location", "source")).lower()
    names[syncs].add(f"mm2-offset-syncs{inner}{target}{inner}internal")
    return names


def _mm2_topics(profile: Profile) -> tuple[set[str], str]:
    """The topics MirrorMaker 2 keeps for the flow, and the copy of the source's heartbeats it writes on the target
    (DefaultReplicationPolicy.formatRemoteTopic, which IdentityReplicationPolicy keeps for heartbeats topics)."""
    sep, _ = _separators(profile)
    return set().union(*_mm2_names(profile).values()), f"{profile.source.alias}{sep}heartbeats"


def _reserved(profile: Profile, side: str) -> set[str]:
    """Every internal or reserved name a grant on ``side`` must not cover: the known fixed ones, MirrorMaker 2's named
    after the drawn aliases, and on the target the copied heartbeats and the sink's offset map and checkpoints topics
    (docs/offset-map.md; named whether or not mirror.groups is on, as a later profile may turn it on)."""
    names = set(KNOWN_RESERVED) | _mm2_names(profile)[side]
    if side == "target":
        alias = profile.source.alias
        names |= {
            _mm2_topics(profile)[1],
            f"secure_mirror.offset-map.{alias}.internal",
            f"{alias}.checkpoints.internal",
        }
    return names


def _covers_reserved(name: str, pattern: str, reserved: set[str]) -> list[str]:
    """The reserved names a TOPIC binding on ``name`` covers (any name starting with '__' stands for Kafka's own)."""
    if pattern == "LITERAL":
        return [name] if name.startswith("__") or name in reserved else []
    return sorted(known for known in reserved if known.startswith(name)) or (["__x"] if "__".startswith(name) else [])


def _every_topic_allowed(profile: Profile, side: str) -> bool:
    """TOPIC '*' is the grant of a `.*` include the profile opted into, and on the target only where every topic keeps
    its name (the rename is the identity): elsewhere the target names share a prefix, which a grant can name."""
    every = profile.mirror.topics.grant_all_topics and ".*" in profile.selection().include
    return every and (side == "source" or profile.target_topic("orders") == "orders")


def _spark_is_safe(profile: Profile, tmp: Path) -> None:
    """What reaches spark-submit: every redaction setting still finds what Spark's default finds, a string pattern
    added to the job's own still hides its secrets, and no setting loads code."""
    conf = spark_conf(profile, tmp / "out")
    settings = dict(conf)
    for key, value in conf.items():
        if key.endswith("JavaOptions"):
            settings.update(re.findall(r"-D(spark\.[a-z.]*redaction[a-z.]*)=(\S+)", value))
    for key, texts in MUST_REDACT.items():
        if key in settings:
            assert all(re.search(settings[key], text) for text in texts), (key, settings[key])
    for key in ("spark.sql.redaction.string.regex", "spark.redaction.string.regex"):
        if key in settings:
            combined = plan_redaction(settings[key])
            assert not any(secret in re.sub(combined, "*", plan) for plan in PLANS for secret in ("s3cret", "MIIB"))
    assert not set(SPARK_CODE) & set(conf), conf


def _set_options(data: dict) -> list[dict]:
    """The option maps a generated profile sets: client options, Spark conf, mm2.properties."""
    mirror = data["mirror"]
    maps = [data["source"].get("client_options"), data["target"].get("client_options")]
    return [m for m in (*maps, mirror.get("spark", {}).get("conf"), mirror.get("mm2", {}).get("properties")) if m]


def _loads_no_class(profile: Profile) -> None:
    options = [*profile.source.client_options.items(), *profile.target.client_options.items()]
    options += profile.mirror.mm2.properties.items()
    assert not [key for key, value in options if EVIL in str(value) or "replication.policy" in key], options


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("generated")


def _validated(data: dict, scratch, outcomes: dict[str, int]) -> Profile | None:
    """The profile ``data`` validates to, or None when validate refuses it: each problem names its field, and no other
    exception escapes. Counted in ``outcomes`` (refused, rendered)."""
    try:
        profile = Profile.model_validate(data, context={"base_dir": scratch})
    except ValidationError as exc:
        assert all(FIELD.match(format_problem(error)) for error in exc.errors()), exc
        outcomes["refused"] += 1
        return None
    outcomes["rendered"] += 1
    return profile


def test_no_generated_profile_renders_a_grant_beyond_the_rule(scratch, monkeypatch):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", "s3cret")
    outcomes = {"refused": 0, "rendered": 0, "rendered with groups": 0}

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=generated(scratch))
    def check(data):
        profile = _validated(data, scratch, outcomes)
        if profile is None:
            return
        outcomes["rendered with groups"] += profile.mirror.groups.enabled
        groups = _group_grants(profile)
        plans = acls.all_plans(profile)
        assert set(plans["source.acls.json"].own_topics) == set()
        heartbeats = {"heartbeats"} if profile.mirror.heartbeats.enabled else set()  # docs/heartbeats.md
        assert set(plans["target.acls.json"].own_topics) == _sync_topics(profile) | heartbeats  # groups: if synced
        for plan in plans.values():
            own, reserved = set(plan.own_topics), _reserved(profile, plan.side)  # own: internal, granted by name
            for binding in plan.bindings:
                assert "*" not in binding.principal, binding
                if binding.resource_type == "GROUP":
                    assert binding.resource_name and (binding.resource_name, binding.pattern_type) in groups, binding
                if binding.resource_type != "TOPIC":
                    assert "*" not in binding.resource_name, binding
                    continue
                if (binding.resource_name, binding.pattern_type) == ("*", "LITERAL"):
                    assert _every_topic_allowed(profile, plan.side), (plan.side, binding)
                    continue
                covered = _covers_reserved(binding.resource_name, binding.pattern_type, reserved)
                if binding.pattern_type == "LITERAL":  # a prefix covers nothing reserved, the identity's own neither
                    covered = [name for name in covered if name not in own]
                assert not covered, (plan.side, binding, covered)
        own, copied = _mm2_topics(profile)
        assert set(plans["mm2-source.acls.json"].own_topics) | set(plans["mm2-target.acls.json"].own_topics) == own
        assert all(LEGAL.match(name) for name in (*own, copied)), (own, copied)  # Kafka takes every name
        for piece in profile.selection().include:
            kind = classify(piece)
            example = kind.value if kind.kind == "literal" else (kind.value if kind.kind == "prefix" else "") + "x"
            target = profile.target_topic(example)
            assert LEGAL.match(target) and not target.startswith("__"), target

    # rounds of 300 (seeds SEED, SEED + 1, ...) until both sides of the rule and the groups were tried often enough:
    # one round renders about 25 to 70 of its profiles, depending on the seed
    for round_seed in range(SEED, SEED + 4):
        seed(round_seed)(check)()
        if outcomes["rendered"] >= 20 and outcomes["refused"] >= 20 and outcomes["rendered with groups"] >= 3:
            break
    print(f"generated profiles: {outcomes}", file=sys.stderr)
    assert outcomes["rendered"] >= 20 and outcomes["refused"] >= 20, outcomes  # both sides of the rule were tried
    assert outcomes["rendered with groups"] >= 3, outcomes


# -- the settings and names the aliases and option maps give, as a property over generated profiles -------------------
@st.composite
def with_settings(draw, tmp):
    """Profiles valid but for what is drawn: the aliases (long ones, ones with '-'), the rename, and the option maps
    (client options, Spark conf, mm2.properties) with settings that load code or make Spark redact less, or not."""
    data = profile_data(tmp)
    for side in ("source", "target"):
        data[side]["alias"] = draw(st.sampled_from(["src", "tgt", "a-b", "b-c", "a" * draw(st.integers(200, 250))]))
        if draw(st.booleans()):
            data[side]["client_options"] = dict(draw(st.lists(st.sampled_from(CLIENT_OPTIONS), max_size=2)))
    if data["source"]["alias"] == data["target"]["alias"]:
        data["target"]["alias"] += "x"
    data["mirror"]["topics"] = {"include": "orders"}
    rule = draw(st.sampled_from(["identity", "alias_prefix", "template"]))
    template = draw(st.sampled_from(["{source_alias}_{topic}", "{source_alias}--{topic}", "m.{topic}"]))
    data["mirror"]["rename"] = {"rule": rule, **({"template": template} if rule == "template" else {})}
    data["mirror"]["spark"] = {"conf": dict(draw(st.lists(st.sampled_from(SPARK_CONF), max_size=2)))}
    data["mirror"]["mm2"] = {"properties": dict(draw(st.lists(st.sampled_from(CLIENT_OPTIONS), max_size=2)))}
    return data


def test_no_generated_profile_loads_code_hides_less_or_names_an_illegal_topic(scratch):
    outcomes = {"refused": 0, "rendered": 0, "rendered with settings": 0}

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=with_settings(scratch))
    def check(data):
        profile = _validated(data, scratch, outcomes)
        if profile is None:
            return
        outcomes["rendered with settings"] += any(_set_options(data))
        plans = acls.all_plans(profile)
        own, copied = _mm2_topics(profile)
        assert set(plans["mm2-source.acls.json"].own_topics) | set(plans["mm2-target.acls.json"].own_topics) == own
        assert all(LEGAL.match(name) for name in (*own, copied)), (own, copied)  # Kafka takes every name
        _spark_is_safe(profile, scratch)
        _loads_no_class(profile)

    for round_seed in range(SEED, SEED + 4):
        seed(round_seed)(check)()
        if outcomes["rendered with settings"] >= 10 and outcomes["refused"] >= 20:
            break
    print(f"generated profiles with settings: {outcomes}", file=sys.stderr)
    assert outcomes["rendered with settings"] >= 10 and outcomes["refused"] >= 20, outcomes


def test_the_all_topics_grant_warns_and_strict_refuses(tmp_path, capsys):
    data = profile_data(tmp_path)
    data["mirror"]["topics"] = {"include": ".*", "grant_all_topics": True}
    path = str(write_profile(tmp_path, data))
    assert main(["validate", path]) == 0
    assert "warning: mirror.topics.grant_all_topics: include .* is granted as TOPIC '*'" in capsys.readouterr().err
    assert main(["validate", "--strict", path]) == 2
