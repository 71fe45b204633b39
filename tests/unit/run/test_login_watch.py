"""The job's Kerberos login watch: which identities it checks (what the KDC answers is tested against the real
KDC in tests/reliability/test_kerberos_faults.py)."""

from __future__ import annotations

from secure_mirror.run.login_watch import gssapi_identities


def _options(principal: str, keytab: str, mechanism: str = "GSSAPI") -> dict:
    jaas = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab="true" storeKey="true" '
            f'useTicketCache="false" serviceName="kafka" keyTab="{keytab}" principal="{principal}";')
    return {"kafka.sasl.mechanism": mechanism, "kafka.sasl.jaas.config": jaas}


def test_identities_come_from_the_gssapi_jaas_options_with_escapes_undone():
    source = _options("mirror/a.example@A.EXAMPLE", r"/keys/with \"quote\".keytab")
    target = _options("mirror/b.example@B.EXAMPLE", "/keys/b.keytab")
    scram = {"kafka.sasl.mechanism": "SCRAM-SHA-512",
             "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                       'username="u" password="p";'}
    found = gssapi_identities(source, target, scram, source)
    assert [(i.principal, i.keytab) for i in found] == [("mirror/a.example@A.EXAMPLE", '/keys/with "quote".keytab'),
                                                        ("mirror/b.example@B.EXAMPLE", "/keys/b.keytab")]
