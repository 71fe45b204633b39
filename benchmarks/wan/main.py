"""The benchmark across a link (the package's docstring, benchmarks/wan/__init__.py, says what it measures): one
sandbox whose source sits behind Toxiproxy, one loaded topic, each link in turn; the results written after each."""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import threading
import time
from pathlib import Path

from benchmarks import wan as package
from benchmarks.comparison.latency import latencies
from benchmarks.harness import admin, cli, contenders, provenance
from benchmarks.harness.bench import SOURCE_TOPIC, Bench, setup_topic
from benchmarks.harness.launch import TASK_SLOTS
from benchmarks.harness.results import write_results
from benchmarks.harness.session import kept_on_failure
from benchmarks.harness.summary import summarize
from benchmarks.wan.report import markdown
from secure_mirror.errors import BadInputError
from secure_mirror.preflight.probes import round_trip, tls
from secure_mirror.profile import load_profile
from secure_mirror.sandbox import Sandbox
from secure_mirror.sandbox.wan import SHARED, Link, Shaper

CONTENDERS = [
    "copy_limit",
    "mirrormaker2",
    "mirrormaker2_kafka_defaults",
    "secure_mirror",
    "secure_mirror_exactly_once",
]
WARM_UP = "copy_limit"  # what runs unmeasured before the first link (--warm-ups)
LATENCY = ["mirrormaker2", "secure_mirror", "secure_mirror_exactly_once"]  # comparison.latency's contenders
FIGURES = (
    "steady_records_per_second",
    "records_per_second",
    "startup_seconds",
    "cpu_seconds_per_million",
    "steady_link_mbit",
)
PROXY = (
    "Toxiproxy v2.5.0 (github.com/Shopify/toxiproxy/v2) before each source broker's WAN listener: a latency toxic "
    "each way (half the round trip each); a cap is one HTB class each way on lo, shared by every connection through "
    "the proxy (tc), or where tc cannot, a bandwidth toxic each way on each connection (each link's 'cap' says which)"
)
log = cli.prefixed("wan")


def links(text: str) -> list[Link]:
    """``--wan 0,25,50,100:200``: each link RTT_MS[:MBIT] (argparse's ``type``: a sentence for a bad one)."""
    try:
        return [Link.parse(part) for part in text.split(",")]
    except BadInputError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--wan ")) from None


def measured_round_trip(sb: Sandbox) -> dict:
    """The link's round trip to each source broker as the mirror sees it (pre-flight's ApiVersions probe)."""
    source = load_profile(sb.profile_path).source
    servers = [(server.rsplit(":", 1)[0], int(server.rsplit(":", 1)[1])) for server in sb.wan_bootstrap_servers()]
    return round_trip.measure(servers, tls.context_for(source.tls_settings), 10.0, samples=5)  # type: ignore[return-value]


def rounds(bench: Bench, files: dict[str, Path], args: argparse.Namespace, shuffle: random.Random, label: str) -> dict:
    """Every contender ``--repeats`` times, a new shuffled order each repeat; each run's figures or its error."""
    runs: dict[str, list[dict]] = {name: [] for name in args.contenders}
    orders = []
    for repeat in range(args.repeats):
        order = shuffle.sample(args.contenders, len(args.contenders))
        orders.append(order)
        for name in order:
            log(f"{label}, repeat {repeat + 1}/{args.repeats}: {name}")
            sampler = LinkSampler() if bench.sb.state["wan"].get("cap") == SHARED else None
            figures = attempt(bench, name, files)
            samples = sampler.stop() if sampler else []
            if samples and "error" not in figures:
                figures |= wire(samples, args.records)
            runs[name].append(figures)
            log(f"{name}: {({k: round(v, 2) for k, v in figures.items() if isinstance(v, float)}) or figures}")
    return {"orders": orders, "runs": runs, "summary": {n: summarize(r, FIGURES) for n, r in runs.items()}}


def attempt(bench: Bench, name: str, files: dict[str, Path]) -> dict:
    """One run of contender ``name``: its figures, or the error that stopped it (recorded; the other runs go on)."""
    try:
        return bench.contender(name, files[name], max(300.0, bench.records / 2000))
    except Exception as exc:  # noqa: BLE001 - recorded; the other contenders still run
        return {"error": f"{type(exc).__name__}: {str(exc)[:600]}"}


class LinkSampler:
    """A shared cap's downstream byte counter (the source's answers, towards the mirror), read every ``every`` seconds
    from its start until :meth:`stop`, in a thread."""

    def __init__(self, every: float = 0.25):
        self.samples: list[tuple[float, int]] = []
        self._done = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        shaper = Shaper()
        while True:
            sent = shaper.downstream_bytes()
            if sent is not None:
                self.samples.append((time.monotonic(), sent))
            if self._done.wait(self._every):
                return

    def stop(self) -> list[tuple[float, int]]:
        self._done.set()
        self._thread.join()
        return self.samples


def wire(samples: list[tuple[float, int]], records: int) -> dict:
    """What crossed a shared cap's downstream class during a run (the source's record batches, compressed as stored):
    its bytes, per record, and its rate while the link was busy: Mbit/s between the samples where the run's bytes
    passed 10% and 90% of their total (the run's start and end, when little crosses, left out, as the steady
    records/s leaves them out)."""
    start = samples[0][1]
    total = samples[-1][1] - start
    out = {"link_bytes": float(total), "link_bytes_per_record": total / records if records else 0.0}
    if total <= 0:
        return out
    first_t, first_sent = next((t, sent) for t, sent in samples if sent - start >= 0.1 * total)
    last_t, last_sent = next((t, sent) for t, sent in samples if sent - start >= 0.9 * total)
    if last_t > first_t:
        out["steady_link_mbit"] = (last_sent - first_sent) * 8 / (last_t - first_t) / 1e6
    return out


def measure_link(
    bench: Bench, files: dict[str, Path], args: argparse.Namespace, link: Link, shuffle, warm_ups: int = 0
) -> dict:
    bench.sb.start_wan(link, profile=True)
    rtt = measured_round_trip(bench.sb)
    log(f"{link}: measured {rtt}")
    wan = bench.sb.state["wan"]
    out = {
        "link": {"rtt_ms": link.rtt_ms, "mbit": link.mbit, "text": link.text, "cap": wan.get("cap")},
        "measured_round_trip": rtt,
    }
    if wan.get("cap_note"):
        out["link"]["cap_note"] = wan["cap_note"]
    if warm_ups:
        out["warm_up"] = [warm_up(bench, files) for _ in range(warm_ups)]
    out |= rounds(bench, files, args, shuffle, str(link))
    if args.latency_records:
        each = []
        for repeat in range(args.latency_repeats):
            log(f"{link}: latency, repeat {repeat + 1}/{args.latency_repeats}")
            # each latency run's jobs from scratch, as the first's
            for folder in ("run-latency", "run-latency-eos", "run-latency-continuous"):
                shutil.rmtree(bench.work / folder, ignore_errors=True)
            try:
                each.append(latencies(bench, files, args.latency_records, args.latency_rate, args.continuous))
            except Exception as exc:  # noqa: BLE001 - recorded: the throughput figures still stand
                each.append({"error": f"{type(exc).__name__}: {str(exc)[:600]}"})
        out["latency_runs"] = each
        out["latency"] = latency_medians(each)
    return out


def warm_up(bench: Bench, files: dict[str, Path]) -> dict:
    """One unmeasured copy-limit run before the first link's measured ones: on a fresh sandbox, every contender ran
    slower at the first link than at the next ones, the copy limit too (benchmarks/NOTES.md section 24), which made
    "against its own 0 ms rate" say little. Its figures are kept, apart."""
    log(f"warm-up: one unmeasured {WARM_UP} run")
    return attempt(bench, WARM_UP, files)


def latency_medians(runs: list[dict]) -> dict:
    """Each latency contender's median p50 and p99 over the runs that measured it, with each run's p99 beside them;
    a run's error (the whole run's, or one contender's) is kept when no run measured that contender."""
    whole = [run["error"] for run in runs if "error" in run]
    names = list(dict.fromkeys(name for run in runs if "error" not in run for name in run))
    if not names:
        return {"error": whole[0]} if whole else {}
    out: dict = {}
    for name in names:
        measured = [run[name] for run in runs if "p99_ms" in run.get(name, {})]
        if not measured:
            out[name] = {"error": next(run[name]["error"] for run in runs if "error" in run.get(name, {}))}
            continue
        out[name] = {
            "p50_ms": statistics.median(m["p50_ms"] for m in measured),
            "p99_ms": statistics.median(m["p99_ms"] for m in measured),
            "samples": sum(m["samples"] for m in measured),
            "runs": len(measured),
            "p99_each_ms": [m["p99_ms"] for m in measured],
        }
    return out


def run(args: argparse.Namespace, command: str) -> dict:
    result = {
        "build": provenance.build(),  # the checkout the run starts from: the code it measures
        "command": command,
        "machine": provenance.machine(),
        "proxy": PROXY,
        "parameters": {
            "links": [link.text for link in args.wan],
            "records": args.records,
            "partitions": args.partitions,
            "repeats": args.repeats,
            "contenders": args.contenders,
            "tasks": TASK_SLOTS,
            "latency_records": args.latency_records,
            "latency_rate": args.latency_rate,
            "latency_repeats": args.latency_repeats,
            "warm_ups": args.warm_ups,
            "continuous": args.continuous,
            "seed": args.seed,
            "values": "varied JSON, about 1 KiB (a third to twice)",
        },
        "links": [],
    }
    shuffle = random.Random(args.seed)
    with kept_on_failure("secure-mirror-wan-") as work:
        log("starting the sandbox with its source behind the proxy")
        sb = Sandbox.up(work / "sandbox", wan_link=Link(0))
        try:
            bench = Bench(sb, work, args.records, args.partitions, args.seed)
            extra = [*(LATENCY if args.latency_records else []), *([WARM_UP] if args.warm_ups else [])]
            named = list(dict.fromkeys([*args.contenders, *extra]))
            files = setup_topic(bench, SOURCE_TOPIC, args.records, named)
            result["load_seconds"] = bench.load_seconds
            for index, link in enumerate(args.wan):
                warm_ups = args.warm_ups if index == 0 else 0
                result["links"].append(measure_link(bench, files, args, link, shuffle, warm_ups))
                write(result, args.out)  # what is measured so far, should a later link fail
        finally:
            admin.drop_kept()
            sb.down()
    return result


def write(result: dict, out: Path) -> str:
    return write_results(out, "wan", result, markdown(result))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/bench --wan", description=(package.__doc__ or "").splitlines()[0])
    parser.add_argument("--wan", type=links, required=True, metavar="RTT_MS[:MBIT],...", help="the links, in turn")
    parser.add_argument("--records", type=int, default=1_000_000, help="records in the source topic")
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3, help="runs of every contender per link")
    parser.add_argument("--latency-records", type=int, default=5000, help="records of each latency run (0: none)")
    parser.add_argument("--latency-rate", type=float, default=1000.0, help="their rate, records/s")
    parser.add_argument("--latency-repeats", type=int, default=1, help="latency runs of every contender per link")
    parser.add_argument(
        "--warm-ups", type=int, default=1, help="unmeasured copy-limit runs before the first link's (0: none)"
    )
    parser.add_argument(
        "--no-continuous",
        dest="continuous",
        action="store_false",
        help="no latency run of the job's continuous mode (and of MirrorMaker 2 with linger 0 beside it)",
    )
    parser.add_argument("--contenders", type=contenders.names, default=CONTENDERS, help=", ".join(CONTENDERS))
    cli.add_out_option(parser)
    cli.add_seed_option(parser)
    args = parser.parse_args(argv)
    cli.stop_on_sigterm()
    given = cli.given(argv)
    args.seed = cli.drawn_seed(args.seed, given)
    result = run(args, " ".join(["scripts/bench", *given]))  # given holds --wan: scripts/bench passes it on
    print(write(result, args.out))
    return 0
