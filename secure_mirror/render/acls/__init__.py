"""The ACLs the mirroring identities need: READ+DESCRIBE on the source topics (and READ on Spark's consumer
groups), WRITE+DESCRIBE+CREATE on the target topics, and READ on the target topics and the group prefix there
so that `verify` can read back what was written. With ``mirror.groups``: DESCRIBE on the synced groups on the source,
READ+DESCRIBE on them on the target, and the offset map and checkpoints topics on the target. MirrorMaker 2 (run from
mm2/mm2.properties) gets its own plans, rendered into separate files, so that the Spark job's identity is granted no
more than the job needs. ``mirror.topic_shape`` adds its operations on the topics.

One module per concern, each importing only those listed before it:

- ``topic_shape``: what ``mirror.topic_shape`` needs on the topics;
- ``plan``: an identity's plan on one cluster (:class:`AclPlan`, asked by :meth:`AclPlan.need`) and the privilege
  rule every plan keeps (:func:`binding_problems`);
- ``job``: the Spark job's plans (:func:`source_acls`, :func:`target_acls`) and the sample names pre-flight asks about;
- ``mm2``: MirrorMaker 2's plans;
- ``words``: each grant in a sentence (MANIFEST.md, manifest.json);
- ``files``: every plan by its file under ``acls/``, and ``apply-acls.sh``.

The names other layers use are imported here."""

from secure_mirror.render.acls.files import all_plans, apply_acls_script
from secure_mirror.render.acls.job import (
    SYNC_OWN_TOPIC_OPERATIONS,
    SYNC_SOURCE_GROUP_OPERATIONS,
    SYNC_TARGET_GROUP_OPERATIONS,
    SYNC_TARGET_TOPIC_OPERATIONS,
    group_samples,
    source_acls,
    spark_group,
    sync_topics,
    target_acls,
    transactional_ids,
)
from secure_mirror.render.acls.mm2 import mm2_own_topics, mm2_source_acls, mm2_target_acls
from secure_mirror.render.acls.plan import AclPlan, Need, NotPlanned, PrivilegeRuleBroken, binding_problems
from secure_mirror.render.acls.words import plan_in_words

__all__ = [
    "SYNC_OWN_TOPIC_OPERATIONS",
    "SYNC_SOURCE_GROUP_OPERATIONS",
    "SYNC_TARGET_GROUP_OPERATIONS",
    "SYNC_TARGET_TOPIC_OPERATIONS",
    "AclPlan",
    "Need",
    "NotPlanned",
    "PrivilegeRuleBroken",
    "all_plans",
    "apply_acls_script",
    "binding_problems",
    "group_samples",
    "mm2_own_topics",
    "mm2_source_acls",
    "mm2_target_acls",
    "plan_in_words",
    "source_acls",
    "spark_group",
    "sync_topics",
    "target_acls",
    "transactional_ids",
]
