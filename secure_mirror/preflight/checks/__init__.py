"""What pre-flight's answers mean, one module per concern: ``settings`` (the profile's warnings and the local files),
``kerberos``, ``connection`` (TLS, librdkafka, Kafka's Java client), ``source``, ``target``, ``acl_fixes`` (a missing
permission, named as the identity's ACL plan grants it) and ``audit``; ``sides`` runs a side's concerns in order.

Each concern asks first, through ``preflight.probes``, then judges with pure ``*_check`` functions of the answers
and the profile, which return Checks and are unit-tested with answer dicts. What an identity needs is asked of its
ACL plan (``render.acls.AclPlan.need``), never derived here."""
