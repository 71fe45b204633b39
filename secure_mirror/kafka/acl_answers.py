"""What a reading of a cluster's ACLs tells (issue 42 part 4), judged from plain data: the bindings DescribeAcls
returned, the reader's operations on the cluster (DescribeCluster) and the brokers' ``authorizer.class.name``
(DescribeConfigs). Pure; shared by pre-flight's audit, ``acls --consumers`` and the cut-over.

librdkafka (2.8.0, unchanged in later releases) reads DescribeAcls' error code and drops it: a refusal
(CLUSTER_AUTHORIZATION_FAILED, the reader lacks DESCRIBE on the cluster) and a broker without an authorizer
(SECURITY_DISABLED) both arrive as an empty list. So the refusal is told by the operations the brokers' own authorizer
reports (Kafka refuses DescribeAcls exactly when DESCRIBE on the cluster is not granted), and a broker without an
authorizer by its empty ``authorizer.class.name``. An authorizer that serves no ACLs (Apache Ranger's answers an empty
list although it grants by its policies) cannot be told from a cluster without ACLs: an empty list proves nothing.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

Kind = Literal["refused", "no-authorizer", "empty"]
REFUSED: Final = "refused"
NO_AUTHORIZER: Final = "no-authorizer"
EMPTY: Final = "empty"


class Unread(NamedTuple):
    """Why a reading does not show the cluster's ACLs: ``refused`` (the reader may not describe them),
    ``no-authorizer`` (the brokers enforce none) or ``empty`` (nothing read, nothing concluded), with the finding."""

    kind: Kind
    finding: str


NOT_CONCLUDED = "so no ACL was read and nothing is concluded from them"
REFUSED_FINDING = (
    "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED): the brokers report no DESCRIBE on the cluster for {who} "
    "(its operations there: {operations}), " + NOT_CONCLUDED
)
NO_AUTHORIZER_FINDING = (
    "the brokers have no authorizer (authorizer.class.name is empty; DescribeAcls answers SECURITY_DISABLED): they "
    "enforce no ACL and grant every client everything, " + NOT_CONCLUDED
)
EMPTY_FINDING = (
    "DescribeAcls answered an empty list{authorizer}: either the cluster holds no ACL, or its authorizer (Apache "
    "Ranger's, say) grants access by policies of its own, which DescribeAcls does not show{unreported}; nothing is "
    "concluded from it"
)
UNREPORTED = ", or {who} lacks DESCRIBE on the cluster (the brokers report no operations: before Kafka 2.3)"


def unread(
    acls: list,
    operations: list[str] | None,
    authorizer: str | None,
    who: str = "the admin identity",
    reports_operations: bool | None = None,
) -> Unread | None:
    """Why ``acls`` (as ``who`` read them) are not the cluster's, or None when they are: refused where the brokers
    report ``operations`` on the cluster without DESCRIBE (or ALL), or report operations (``reports_operations``: Kafka
    2.3+) and none for ``who``; no authorizer where ``authorizer`` (its class name, None when not read) is empty; empty
    where nothing was read."""
    if operations is None and reports_operations:
        operations = []  # confluent-kafka hands "none granted" over as None
    if operations is not None and not {"DESCRIBE", "ALL"} & set(operations):
        return Unread(REFUSED, REFUSED_FINDING.format(who=who, operations=", ".join(operations) or "none"))
    if authorizer == "":
        return Unread(NO_AUTHORIZER, NO_AUTHORIZER_FINDING)
    if not acls:
        named = f" (the brokers' authorizer: {authorizer})" if authorizer else ""
        unreported = UNREPORTED.format(who=who) if operations is None else ""
        return Unread(EMPTY, EMPTY_FINDING.format(authorizer=named, unreported=unreported))
    return None
