"""Pre-flight: prove the credentials, TLS trust and ACLs of both clusters before the mirror starts.

``run_preflight(profile)`` returns a :class:`Report` (``ok()``, ``to_json()``, ``missing_acls(side)``);
``render_table(report)`` prints it. Layers: ``kerberos``, ``tls`` and ``kafka`` talk to the servers;
``checks`` and ``audit`` decide what a result means; ``authorizer`` is Kafka's ACL evaluation, pure.
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
