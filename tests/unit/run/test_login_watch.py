"""The job's Kerberos login watch: which identities it checks (what the KDC answers is tested against the real
KDC in tests/reliability/test_kerberos_faults.py). The identities come from render's ``job.json`` as data."""

from __future__ import annotations

from secure_mirror.render.job_file import job_settings
from secure_mirror.render.spark import sink_options, source_options
from secure_mirror.run.login_watch import job_identities
from tests.support import profiles as pf


def _identities(profile):
    return job_identities(job_settings(profile), source_options(profile), sink_options(profile))


def test_each_gssapi_side_is_watched_with_the_jaas_its_clients_use(tmp_path):
    profile = pf.load(
        tmp_path, source=pf.gssapi(tmp_path, "source"), target=pf.password(tmp_path, "target", "SCRAM-SHA-512")
    )
    [identity] = _identities(profile)
    assert identity.principal == profile.source.sasl.principal
    assert identity.keytab == str(profile.source.sasl.keytab)  # local master: the keytab where it is
    assert identity.jaas == source_options(profile)["kafka.sasl.jaas.config"]


def test_shipped_keytabs_are_named_as_the_executors_see_them(tmp_path):
    profile = pf.load(
        tmp_path,
        source=pf.gssapi(tmp_path, "source"),
        target=pf.gssapi(tmp_path, "target"),
        spark={"master": "spark://127.0.0.1:7077"},
    )
    found = _identities(profile)
    assert [i.keytab for i in found] == ["source-mirror.keytab", "target-mirror.keytab"]
    for identity in found:
        assert f'keyTab="{identity.keytab}"' in identity.jaas


def test_no_kerberos_no_identity(tmp_path):
    profile = pf.load(
        tmp_path,
        source=pf.password(tmp_path, "source", "SCRAM-SHA-512"),
        target=pf.password(tmp_path, "target", "PLAIN"),
    )
    assert _identities(profile) == [] and job_settings(profile).identities == ()
