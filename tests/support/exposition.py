"""Reading the job's metrics as Prometheus and the JMX exporter would (no tests here): Prometheus's text format,
Prometheus's ``metric_relabel_configs`` (the replace, drop and keep actions, RE2 regexes anchored at both ends, Go's
``$1``/``${1}`` expansion), the Prometheus JMX exporter's rules (its ``domain<key=value, ...><>attribute`` string, its
unanchored patterns, lower-cased and sanitised names) and the output of Kafka's JmxTool (``--report-format
properties``). Used to check monitoring/prometheus.yml and monitoring/jmx-exporter.yml against what the job exposes."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from secure_mirror import paths

MONITORING = paths.REPO_ROOT / "monitoring"
ATTRIBUTES = [  # MirrorMaker 2's MirrorSourceConnector attributes (connect/mirror MirrorSourceMetrics)
    "record-count",
    "record-rate",
    "record-age-ms",
    "record-age-ms-max",
    "record-age-ms-min",
    "record-age-ms-avg",
    "byte-count",
    "byte-rate",
    "replication-latency-ms",
    "replication-latency-ms-max",
    "replication-latency-ms-min",
    "replication-latency-ms-avg",
]
Series = tuple[str, tuple[tuple[str, str], ...]]  # (name, sorted labels)
LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
GO_GROUP = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def parse_text(text: str) -> dict[Series, float]:
    """Prometheus's text exposition format: every sample as ``{(name, labels): value}``."""
    samples = {}
    for line in text.splitlines():
        match = LINE.match(line.strip())
        if match and not line.startswith("#"):
            labels = tuple(sorted(LABEL.findall(match.group(2) or "")))
            samples[(match.group(1), labels)] = float(match.group(3))
    return samples


def _expand(template: str, match: re.Match) -> str:
    """Go's regexp Expand: ``$name`` takes the longest run of letters, digits and ``_``; unknown groups are ''."""

    def group(found: re.Match) -> str:
        name = found.group(1) or found.group(2)
        try:
            return match.group(int(name) if name.isdigit() else name) or ""
        except IndexError:  # no such group
            return ""

    return GO_GROUP.sub(group, template)


def relabel(labels: dict[str, str], rules: list[dict]) -> dict[str, str] | None:
    """One series' labels (``__name__`` included) after ``metric_relabel_configs``; None when dropped."""
    labels = dict(labels)
    for rule in rules:
        value = rule.get("separator", ";").join(labels.get(name, "") for name in rule.get("source_labels", []))
        match = re.fullmatch(rule.get("regex", "(.*)"), value)
        action = rule.get("action", "replace")
        if (action == "drop" and match) or (action == "keep" and not match):
            return None
        if action == "replace" and match:
            target, replaced = _expand(rule["target_label"], match), _expand(rule.get("replacement", "$1"), match)
            if replaced:
                labels[target] = replaced
            else:
                labels.pop(target, None)
    return labels


def scrape_job(name: str, path: Path = MONITORING / "prometheus.yml") -> dict:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    return next(job for job in config["scrape_configs"] if job["job_name"] == name)


def relabelled(samples: dict[Series, float], rules: list[dict]) -> dict[Series, float]:
    """Every sample after the rules, as Prometheus would store it."""
    kept = {}
    for (name, labels), value in samples.items():
        after = relabel({"__name__": name, **dict(labels)}, rules)
        if after is not None:
            series_name = after.pop("__name__")
            kept[(series_name, tuple(sorted(after.items())))] = value
    return kept


def jmx_tool_properties(text: str) -> dict[tuple[str, str], float]:
    """JmxTool's ``properties`` report: ``{(object name, attribute): value}`` (the time line left out)."""
    found = {}
    for line in text.splitlines():
        head, _, value = line.rpartition("=")
        name, _, attribute = head.rpartition(":")
        if name and ":" in name:
            found[(name, attribute)] = float(value)
    return found


def _safe_name(name: str) -> str:
    """The JMX exporter's name sanitising: each run of characters Prometheus does not allow becomes one ``_``."""
    return re.sub(r"_+", "_", re.sub(r"[^a-zA-Z0-9:_]", "_", name))


def jmx_exporter(beans: dict[tuple[str, str], float], path: Path = MONITORING / "jmx-exporter.yml") -> dict:
    """What the Prometheus JMX exporter with the rules of ``path`` would expose for these MBean attributes (only the
    first matching rule counts; attributes no rule matches are left out)."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    rules = [(re.compile(f"^.*(?:{rule['pattern']}).*$"), rule) for rule in config["rules"]]
    exposed = {}
    for (object_name, attribute), value in beans.items():
        domain, _, keys = object_name.partition(":")
        subject = f"{domain}<{', '.join(keys.split(','))}><>{attribute}"
        for pattern, rule in rules:
            match = pattern.match(subject)
            if match:
                name = _safe_name(match.expand(rule["name"].replace("$", "\\")))
                name = name.lower() if config.get("lowercaseOutputName") else name
                labels = {k: match.expand(v.replace("$", "\\")) for k, v in (rule.get("labels") or {}).items()}
                exposed[(name, tuple(sorted((k, v) for k, v in labels.items() if v)))] = value
                break
    return exposed
