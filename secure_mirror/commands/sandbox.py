"""``secure-mirror sandbox up|down|status``: the built-in test bed."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from secure_mirror.commands import arguments
from secure_mirror.errors import EXIT_FAILED, EXIT_OK, BadInputError
from secure_mirror.sandbox import Sandbox, old_broker
from secure_mirror.sandbox.kdc import KRB5_DURATION
from secure_mirror.sandbox.nodes import MAX_BROKERS, PORTS, PORTS_PER_BROKER
from secure_mirror.sandbox.ranger import RangerPolicyCache
from secure_mirror.sandbox.wan import Link, ports_needed

ONE_BROKER_PORTS = PORTS + ports_needed(1)  # one broker a side, and the WAN link's three


def default_dir() -> Path:
    return Path(os.environ.get("SECURE_MIRROR_SANDBOX", "sandbox-run"))


def _port_base(text: str) -> int:
    if not text.isdigit() or not 1024 <= int(text) <= 65536 - ONE_BROKER_PORTS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port from 1024 to {65536 - ONE_BROKER_PORTS} ({ONE_BROKER_PORTS} follow it)"
        )
    return int(text)


def _brokers(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_BROKERS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a broker count from 1 to {MAX_BROKERS}")
    return int(text)


def _reauth_ms(text: str) -> int:
    if not text.isdigit() or int(text) < 1000:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number of milliseconds of at least 1000")
    return int(text)


def _ticket_lifetime(text: str) -> str:
    if not KRB5_DURATION.match(text):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a Kerberos duration such as 5m, 10h or 1d12h")
    return text


def _wan(text: str) -> Link:
    try:
        return Link.parse(text)
    except BadInputError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--wan ")) from None


def add_arguments(parser) -> None:
    parser.add_argument("action", choices=["up", "down", "status"])
    parser.add_argument(
        "--dir", type=Path, default=None, help="the sandbox folder (default: $SECURE_MIRROR_SANDBOX or ./sandbox-run)"
    )
    parser.add_argument(
        "--port-base",
        type=_port_base,
        default=None,
        help=f"use {ONE_BROKER_PORTS} consecutive ports from here instead of free ones chosen at start "
        f"({PORTS_PER_BROKER * 2 + 2} more for each broker after a side's first)",
    )
    parser.add_argument(
        "--ticket-lifetime", type=_ticket_lifetime, default="10h", help="Kerberos ticket lifetime (e.g. 5m, 10h)"
    )
    parser.add_argument(
        "--brokers",
        type=_brokers,
        default=1,
        help=f"brokers a cluster (default 1; 3 for production's shape: a controller quorum of three, replication "
        f"factor 3, min.insync.replicas 2; at most {MAX_BROKERS})",
    )
    parser.add_argument(
        "--reauth-ms",
        type=_reauth_ms,
        default=None,
        help="the brokers' connections.max.reauth.ms: clients must authenticate again on open connections this often "
        "(KIP-368), with the credentials they hold by then (default: never, as Kafka's default)",
    )
    parser.add_argument(
        "--wan",
        type=_wan,
        default=None,
        metavar="RTT_MS[:MBIT]",
        help="put the source brokers across a link from the mirror: Toxiproxy adds this round trip (half each way) "
        "and, with :MBIT, caps each connection's bandwidth; profile.yaml reaches the source through it, the brokers' "
        "replication and other clients stay direct (docs/wan.md)",
    )
    arguments.flag(parser, "--plaintext", "also open a PLAINTEXT listener on each broker (for benchmarks)")
    arguments.flag(
        parser,
        "--old-broker",
        "also start a Kafka 2.2 broker with ZooKeeper (SASL_PLAINTEXT, GSSAPI) in the source realm, and a profile "
        "mirroring from it",
    )
    parser.add_argument(
        "--old-broker-ranger",
        metavar="POLICIES",
        default=None,
        help="with --old-broker: authorize it with Apache Ranger's Kafka authorizer 1.2.0, which loads these Ranger "
        "policies (render's DIR/ranger/source.policies.json) from its policy cache, no Ranger Admin",
    )
    arguments.flag(
        parser,
        "--hadoop",
        "also start a kerberized Hadoop (HDFS NameNode and DataNode, YARN ResourceManager and NodeManager) in the "
        "source realm, and profiles running the mirror on its YARN",
    )
    arguments.flag(parser, "--json", "print the connection facts as JSON")


def run(args) -> int:
    base = args.dir or default_dir()
    if args.action == "up":
        if args.old_broker_ranger and not args.old_broker:
            raise BadInputError("--old-broker-ranger needs --old-broker")
        ranger = RangerPolicyCache.from_file(Path(args.old_broker_ranger)) if args.old_broker_ranger else None
        sb = Sandbox.up(
            base,
            port_base=args.port_base,
            ticket_lifetime=args.ticket_lifetime,
            plaintext=args.plaintext,
            with_hadoop=args.hadoop,
            brokers=args.brokers,
            reauth_ms=args.reauth_ms,
            wan_link=args.wan,
        )
        if args.old_broker:
            try:
                old_broker.start(sb, ranger=ranger)
            except BaseException:
                sb.down()
                raise
        _print(sb.summary(), args.json)
        return EXIT_OK
    sb = Sandbox.load(base)
    if args.action == "down":
        sb.down()
        print(f"sandbox in {sb.base} stopped and removed")
        return EXIT_OK
    summary = sb.summary()
    _print(summary, args.json)
    return EXIT_OK if all(summary["processes"].values()) else EXIT_FAILED


def _print(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary, indent=2))
        return
    print(f"sandbox: {summary['dir']}")
    for side, c in summary["clusters"].items():
        print(f"  {side:6} {c['bootstrap']:28} realm {c['realm']:12} mirror {c['mirror_principal']}")
    print(
        f"  KDC    127.0.0.1:{summary['kdc_ports'][0]} (SOURCE.TEST), 127.0.0.1:{summary['kdc_ports'][1]} (TARGET.TEST)"
    )
    print(f"  krb5.conf {summary['krb5_conf']}")
    print(f"  CA        {summary['ca_file']}")
    print(f"  profile   {summary['profile']}")
    if link := summary.get("wan"):
        print(f"  wan       {link['link']}: the mirror reaches the source at {', '.join(link['source_bootstrap'])}")
    if hd := summary.get("hadoop"):
        print(
            f"  hadoop {hd['default_fs']:28} YARN {hd['resourcemanager']}; client configuration {hd['client_conf_dir']}"
        )
        print(
            "         "
            + ", ".join(
                f"{d} ready {hd['ready_seconds'].get(d, '?')}s, {hd['rss_mib'].get(d, 0)} MiB" for d in hd["processes"]
            )
        )
    if old := summary.get("old_broker"):
        print(
            f"  old    {old['bootstrap']:28} Kafka {old['version']} with ZooKeeper, SASL_PLAINTEXT, "
            f"{old['authorizer']}; profile {old['profile']}"
        )
    print("  processes " + ", ".join(f"{k}={'running' if v else 'stopped'}" for k, v in summary["processes"].items()))
