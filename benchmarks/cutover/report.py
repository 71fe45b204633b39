"""The cut-over benchmark's Markdown, from its result only."""

from __future__ import annotations

from benchmarks.cutover.scenario import GOAL_SECONDS


def figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def markdown(result: dict) -> str:
    s, load_avg = result["scenario"], result["load_average_1min"]
    lines = [
        f"# Cut-over of {s['topics']} topics and {s['groups']} groups: secure_mirror against MirrorMaker 2's manual "
        "procedure (issue 41)",
        "",
        f"Command: `{result['command']}` (seed {result['seed']}), {result['runs']} run, on "
        f"{result['machine']['cpus']} CPUs shared with other work, load average (1 min) {load_avg['start']:.2f} at "
        f"the start, {load_avg.get('end', 0):.2f} at the end.",
        "",
        f"{s['topics']} topics ({s['partitions']} partitions, {s['records']} records before the mirror), "
        f"{s['groups']} groups ({s['group_partitions']} group partitions, each committed at a seeded offset), "
        f"{s['producers']} producer principals (LITERAL WRITE grants) writing until refused, {s['readers']} reader "
        "principals. From the end of the drain: secure_mirror's sync, stop, promote and report steps (its report's "
        "times); MirrorMaker 2's wait for checkpoints and offset sync, its stop and the grants by hand (as an operator "
        "must wait: one checkpoint and one sync interval; as an oracle would: until the offsets last changed). "
        f"Goal: under {GOAL_SECONDS:.0f} s.",
        "",
        "| contender | from the end of the drain, s | whole cut-over, s | steps by hand | re-read | skipped | of "
        "unconsumed | groups re-reading | partitions without target offset |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in result["contenders"].items():
        if "error" in c:
            lines.append(f"| {name} | error: {c['error'][:300]} | | | | | | | |")
            continue
        t = c["reads"]["total"]
        by_hand = sum(step["by_hand"] for step in c["steps_by_hand"])
        if name == "mirrormaker2":
            after = f"{figure(c['after_drain']['operator'])} (oracle {figure(c['after_drain']['oracle'])})"
            whole = figure(c["marks_seconds"]["grant_consumers"])
        else:
            after, whole = figure(c["times"]["after_drain"]), figure(c["times"]["total"])
        lines.append(
            f"| {name} | {after} | {whole} | {by_hand} | {t['re_read']} | {t['skipped']} | {t['unconsumed']} | "
            f"{len(t['groups_re_reading'])} of {t['groups']} | {t['partitions_without_target_offset']} |"
        )
    lines += ["", "Steps:", ""]
    for name, c in result["contenders"].items():
        if "error" in c:
            continue
        if name == "mirrormaker2":
            marks = ", ".join(f"{k} at {v:.1f} s" for k, v in c["marks_seconds"].items())
            lines.append(
                f"- {name} (seconds from the fence): {marks}; offsets last changed at "
                f"{c['offsets_settled_seconds']:.1f} s"
            )
        else:
            steps = ", ".join(f"{k} {figure(v)} s" for k, v in c["times"]["steps"].items())
            lines.append(f"- {name}: {steps}")
        lines += [f"  - by hand: {step['step']} ({step['by_hand']})" for step in c["steps_by_hand"]]
    return "\n".join(lines) + "\n"
