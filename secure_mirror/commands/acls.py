"""secure-mirror acls PROFILE --consumers [--as-admin ADMIN] [--out DIR] [--json]: the consumer access plan
(docs/consumer-access.md). Reads the source's and the target's ACLs with an admin identity, prints the target-side
bindings the consumers of the mirrored topics need after failover against what the target holds, and with ``--out``
writes them as ``consumer-acls.sh`` (for review; never run here) and ``consumer-acls.json``. Exit 0 with a plan, 1 when
the source's ACLs could not be read or are not the cluster's (DescribeAcls refused, no authorizer, an empty list)."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from secure_mirror.commands import arguments
from secure_mirror.errors import EXIT_OK, BadInputError, SecureMirrorError
from secure_mirror.identities import Identities
from secure_mirror.kafka import acl_answers, client_support
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.preflight.probes import api_versions
from secure_mirror.preflight.probes.kafka_admin import acls as acl_probes
from secure_mirror.profile import load_profile, policy
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile
from secure_mirror.render import consumer_acls


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arguments.profile(parser)
    arguments.flag(
        parser,
        "--consumers",
        "the consumers' plan: the target-side bindings the source's consumers of the mirrored topics need",
    )
    arguments.as_admin(parser, "read the ACLs", "the mirror's identities (which may not describe ACLs)")
    parser.add_argument("--out", metavar="DIR", help="write DIR/consumer-acls.sh (for review) and consumer-acls.json")
    arguments.flag(parser, "--json", "print the plan as JSON")
    arguments.timeout(parser, "Kafka")


def run(args: argparse.Namespace) -> int:
    if not args.consumers:
        raise BadInputError("acls: name the plan to make: --consumers (the consumers' access to the target copies)")
    profile = load_profile(args.profile)
    clusters = admin_clusters(profile, args.as_admin) if args.as_admin else {}
    client_support.require(profile.mechanisms, "acls")
    answers = read_both(profile, clusters, args.timeout)
    plan = consumer_acls.consumer_plan(
        profile, *_source(answers["source"], args.as_admin), _target(answers["target"], args.as_admin)
    )
    for path in consumer_acls.write(plan, profile, Path(args.out)) if args.out else ():
        print(f"wrote {path}", file=sys.stderr)
    print(plan.to_json() if args.json else summary(plan), end="" if args.json else "\n")
    return EXIT_OK


def read_both(profile: Profile, admins: dict[Side, Cluster], timeout: float) -> dict[Side, dict]:
    """Each side's topics and ACLs as the admin identity ``admins`` names reads them (the mirror's identity on a side
    it does not name), both sides at once, each identity in a process of its own."""
    with Identities.for_profile(profile, admins=admins, prefix="secure-mirror-acls-") as identities:
        with ThreadPoolExecutor(2) as pool:
            asked = {
                side: pool.submit(identities.call, side, acl_probes.read_inventory, timeout, who=_who(admins, side))
                for side in profile.clusters()
            }
            answers = {side: future.result() for side, future in asked.items()}
    for side, answer in answers.items():  # none reported: none granted, where the brokers report operations
        if answer.get("operations", []) is None:
            cluster = admins.get(side, profile.cluster(side))
            answer["reports_operations"] = api_versions.operations_reported(cluster, timeout)
    return answers


def _who(admins: dict[Side, Cluster], side: Side) -> str:
    return "admin" if side in admins else "mirror"


def _source(answer: dict, as_admin: str | None) -> tuple[list[Acl], list[str]]:
    """The source's bindings and topics; refused (exit 1) where its ACLs could not be read or are not the cluster's
    (``kafka.acl_answers``): an empty or refused answer never reads as "no consumers"."""
    reader = "the admin identity" if as_admin else "the mirror's identity"
    who = reader if as_admin else f"{reader} (no --as-admin)"
    fix = "give --as-admin an identity with DESCRIBE on the source cluster (a super user or an ACL admin)"
    if "error" in answer:
        raise SecureMirrorError(f"the source's ACLs could not be read as {who}: {answer['error']}; {fix}")
    why = _unread(answer, reader)
    if why is not None:
        if why.kind != acl_answers.REFUSED:
            fix = "grant the consumers on the target by name (where an external authorizer decides, in its policies)"
        raise SecureMirrorError(
            f"no consumer access plan: the source's ACLs were not read as {who}: {why.finding}; {fix}"
        )
    return answer["acls"], list(answer["topics"])


def _target(answer: dict, as_admin: str | None = None) -> list[Acl] | None:
    """The target's bindings for the diff, or None (every binding listed as to add) where they were not read."""
    fix = "give --as-admin an identity with DESCRIBE on the target cluster for the diff"
    if "error" in answer:
        why = answer["error"]
    elif (unread := _unread(answer, "the admin identity" if as_admin else "the mirror's identity")) is not None:
        why = unread.finding
        fix = fix if unread.kind == acl_answers.REFUSED else "'add' may include what the target grants otherwise"
    else:
        return answer["acls"]
    print(
        f"warning: the target's ACLs were not read ({why}): every binding is listed as to add; {fix}", file=sys.stderr
    )
    return None


def _unread(answer: dict, who: str = "the admin identity") -> acl_answers.Unread | None:
    operations, authorizer, reported = (answer.get(k) for k in ("operations", "authorizer", "reports_operations"))
    return acl_answers.unread(answer["acls"], operations, authorizer, who, reported)


def summary(plan: consumer_acls.ConsumerPlan) -> str:
    """The plan in lines: principals, bindings to add and present, what was not copied and why."""
    present = set(plan.present or ())
    lines = [f"consumer access on {plan.target_alias} from {plan.source_alias}'s ACLs"]
    lines += [f"principal {source} -> {target} ({how})" for source, (target, how) in plan.principals.items()]
    lines += [f"{'present' if b in present else 'add':8} {_words(b)}" for b in plan.bindings]
    lines += [f"skipped  {_words(item.binding)}: {item.reason}" for item in plan.skipped]
    if plan.present is None:
        lines.append("the target's ACLs were not read: 'add' may include bindings it holds")
    return "\n".join(lines)


def _words(acl: Acl) -> str:
    """A binding in words, with any control character of a name shown escaped, never sent to the terminal."""
    return policy.printable(acl.words())
