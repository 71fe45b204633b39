"""What render writes of the plans under ``acls/``: every plan by its file (:func:`all_plans`), and
``apply-acls.sh``, which gives ``kafka-acls.sh`` each binding through the ``acl_arguments`` filter (consumer-acls.sh
uses it too)."""

from __future__ import annotations

from pathlib import Path

from secure_mirror.kafka.acl import kafka_acls_arguments
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl
from secure_mirror.render import templating
from secure_mirror.render.acls.job import source_acls, target_acls
from secure_mirror.render.acls.mm2 import mm2_source_acls, mm2_target_acls
from secure_mirror.render.acls.plan import AclPlan
from secure_mirror.render.encoders import sh

templating.register_filter("acl_arguments", lambda acl: kafka_acls_arguments(acl, sh))


def apply_acls_script(plans: list[AclPlan], out_dir: Path) -> str:
    """``apply-acls.sh`` granting the job's ``plans`` (its source and target plans)."""
    return templating.render(
        "templates/apply-acls.sh.j2",
        plans=plans,
        out_dir=str(out_dir),
        kerberos=any(isinstance(plan.cluster.sasl, GssapiSasl) for plan in plans),
    )


def all_plans(profile: Profile) -> dict[str, AclPlan]:
    """Every plan render writes, by its file under ``acls/``."""
    return {
        "source.acls.json": source_acls(profile),
        "target.acls.json": target_acls(profile),
        "mm2-source.acls.json": mm2_source_acls(profile),
        "mm2-target.acls.json": mm2_target_acls(profile),
    }
