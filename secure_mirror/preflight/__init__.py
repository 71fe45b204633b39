"""Pre-flight: prove the credentials, TLS trust and ACLs of both clusters before the mirror starts.

``run_preflight(profile)`` returns a :class:`Report` (``ok()``, ``to_json()``, ``missing_acls(side)``);
``render_table(report)`` prints it. Layers, each importing only those before it (``tests/unit/test_layers.py``):
``probes`` ask the KDCs, the brokers, the files and Kafka's Java client and answer with plain data; ``model`` (the
report) and ``authorizer`` (Kafka's ACL evaluation, pure); ``checks`` ask through the probes and judge the answers
with pure functions, one module per concern, the ``--as-admin`` audit among them; ``runner`` runs each identity's
checks in its own worker process (``workers``), ``table`` prints, ``admin_identity`` reads ``--as-admin``.
"""

from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, UNVERIFIED, WARN, Check, Report
from secure_mirror.preflight.runner import DEFAULT_TIMEOUT, SIDES, run_preflight
from secure_mirror.preflight.table import render_table

__all__ = [
    "DEFAULT_TIMEOUT",
    "FAIL",
    "PASS",
    "SIDES",
    "SKIPPED",
    "UNVERIFIED",
    "WARN",
    "Check",
    "Report",
    "render_table",
    "run_preflight",
]
