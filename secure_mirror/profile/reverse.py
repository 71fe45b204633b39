"""The profile of the way back (``secure-mirror reverse``): a pure function of a profile's data (as its YAML holds it).

For a flow A -> B it makes B -> A:

- the two cluster sections swap whole, each with its identity, TLS, principal mapping and executor login;
- names map back: the way back keeps names (``rename: identity``) and selects the original names (the forward's
  ``topics.include``), so what applications write on B under ``orders`` after a failover goes back to ``orders`` on
  A. Under a renaming rule it also excludes B's copies of A's topics (``A.orders`` under ``alias_prefix``): every
  record in them came from A. Under ``identity`` the names are the same both ways, and only the provenance headers
  tell the records apart, so the forward profile must write them;
- ``provenance_headers: true``, so the forward flow skips what the way back copies (docs/provenance.md);
- its own checkpoint (``<checkpoint>.<B>-to-<A>``), since a checkpoint belongs to one flow;
- the rest is kept: ``groups`` (the groups that failed over to B follow their offsets back), heartbeats, delivery,
  Spark, Kerberos and Hadoop settings.
"""

from __future__ import annotations

import copy
from typing import Any

from secure_mirror.errors import BadInputError
from secure_mirror.profile import cycles
from secure_mirror.profile.models import Profile


class ReverseRefused(BadInputError):
    """A profile whose way back could not run without loops."""


UNMARKED = (
    "mirror.rename.rule is identity (kept names) and mirror.provenance_headers is off: the records this flow copies "
    "to {target} carry no mark the way back could tell apart from {target}'s own, so they would be copied back to "
    "{source}; set mirror.provenance_headers: true in this profile (and run it so) before reversing it"
)


def reverse_data(data: dict[str, Any], profile: Profile) -> dict[str, Any]:
    """The way back's profile data from ``data`` (the forward profile's YAML) and ``profile`` (it, validated)."""
    mirror = profile.mirror
    source, target = profile.source.alias, profile.target.alias
    if mirror.rename.rule == "identity" and not mirror.provenance_headers:
        raise ReverseRefused(UNMARKED.format(source=source, target=target))
    back = copy.deepcopy(data)
    back["source"], back["target"] = back["target"], back["source"]
    way = back["mirror"]
    way["rename"] = {"rule": "identity"}
    way["topics"] = _topics(way["topics"], mirror.rename.template_text, source, target, mirror.rename.mm2_separator)
    way["provenance_headers"] = True
    way["checkpoint_location"] = reverse_checkpoint(mirror.checkpoint_location, source, target)
    return back


def _topics(topics: dict[str, Any], template: str, source: str, target: str, separator: str | None) -> dict:
    """The forward's selection, less the names the forward gave its copies on the target (none under identity)."""
    copies = cycles.cycle_pattern(template, target, source, separator)
    if copies is None:
        return topics
    exclude = ",".join(part for part in (topics.get("exclude"), copies) if part)
    return {**topics, "exclude": exclude}


def reverse_checkpoint(location: str, source: str, target: str) -> str:
    """The way back's checkpoint: ``<location>.<target>-to-<source>``, or the forward's own location when
    ``location`` is already a way back's of this pair (reversing twice gives the forward's checkpoint back)."""
    back, there = f".{target}-to-{source}", f".{source}-to-{target}"
    if location.endswith(there):
        return location[: -len(there)]
    return location + back
