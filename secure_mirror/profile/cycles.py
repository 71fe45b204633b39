"""Topics a flow never mirrors because their names say they came from the cluster it writes to (MirrorMaker 2's
``isCycle``).

Under a rename rule that names the source cluster (``alias_prefix``, or a template with ``{source_alias}``), the way
back (target -> source, the same rule) names what it copies after the target: in a flow ``A -> B`` with
``alias_prefix``, a source topic ``B.orders`` is B's ``orders`` copied to A, so mirroring it to B would close a loop.
As MirrorMaker 2 recurses through ``upstreamTopic``, a name with such a piece after a separator (``C.B.orders``) is a
cycle too. ``identity`` (and a template without ``{source_alias}``) names nothing after a cluster: there only the
provenance headers tell, and the sink skips a record that came from its target (docs/provenance.md).
"""

from __future__ import annotations

import re
import string


def _java_literal(text: str) -> str:
    """``text`` (letters, digits, '.', '_', '-': a topic's characters) as a Java regex matching only itself."""
    return re.sub(r"([.\-])", r"\\\1", text)


def cycle_pattern(template: str, source_alias: str, target_alias: str, separator: str | None = None) -> str | None:
    """The Java regex of the source topics whose names the rename ``template`` gives in the other direction (from
    ``target_alias`` to ``source_alias``), or None when the template does not name the source cluster. With
    ``separator`` (the rule is MirrorMaker 2's ``{source_alias}<separator>{topic}``) also those names after any
    number of ``<something><separator>`` pieces, as MirrorMaker 2's recursion finds them."""
    pieces = list(string.Formatter().parse(template))
    if not any(name == "source_alias" for _, name, _, _ in pieces):
        return None
    swapped = {"topic": ".+", "source_alias": _java_literal(target_alias), "target_alias": _java_literal(source_alias)}
    regex = "".join(_java_literal(literal) + (swapped[name] if name else "") for literal, name, _, _ in pieces)
    return f"(?:.*{_java_literal(separator)})?{regex}" if separator else regex
