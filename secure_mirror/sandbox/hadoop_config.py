"""The sandbox Hadoop's configuration (:mod:`.hadoop` runs its daemons): the names and addresses of the daemons,
their principals and keytabs, the site files the daemons and a client read, and the TLS stores of the HTTPS
endpoints (the security this gives is described in :mod:`.hadoop`)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.render.hadoop_conf import site_xml
from secure_mirror.sandbox.credentials import write_secret
from secure_mirror.sandbox.kdc import KDC
from secure_mirror.sandbox.tls import CertificateAuthority, ec_key, write_private

HOST = "localhost"  # Hadoop's daemons bind and name their principals by this loopback name
FIFO_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler"
NM_MEMORY_MB, NM_VCORES = 6144, 8  # what YARN may hand out (a Spark AM and two executors fit)
WEBAPPS = ("hdfs", "datanode")  # the HDFS web servers' (empty) resource folders: no web pages, the endpoints only
LOG4J = """log4j.rootLogger=INFO, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""


@dataclass
class HadoopConfig:
    """The four daemons' names and configuration; ``state`` (ports, pids, start seconds) is kept in the sandbox's
    state.json."""

    base: Path  # <sandbox>/hadoop
    realm: str
    krb5_conf: Path
    state: dict

    # ---- names -------------------------------------------------------------------------------------
    def principal(self, service: str) -> str:
        return f"{service}/{HOST}@{self.realm}"

    def keytab(self, service: str) -> Path:
        return self.base / ("hdfs.keytab" if service in ("nn", "dn", "HTTP") else "yarn.keytab")

    @property
    def conf_dir(self) -> Path:
        return self.base / "conf"

    @property
    def ports(self) -> dict[str, int]:
        return self.state["ports"]

    @property
    def default_fs(self) -> str:
        return f"hdfs://{HOST}:{self.ports['nn_rpc']}"

    def address(self, name: str) -> str:
        return f"{HOST}:{self.ports[name]}"

    def log(self, daemon: str) -> Path:
        return self.base / "logs" / f"{daemon}.log"

    # ---- configuration -----------------------------------------------------------------------------
    def auth_to_local(self) -> str:
        realm = self.realm.replace(".", "\\.")
        rules = [
            f"RULE:[2:$1@$0]({svc}@{realm})s/.*/{user}/"
            for svc, user in (("nn", "hdfs"), ("dn", "hdfs"), ("rm", "yarn"), ("nm", "yarn"))
        ]
        return " ".join([*rules, "DEFAULT"])

    def client_properties(self) -> dict[str, dict[str, str]]:
        """What a client needs (per file): where HDFS and YARN are and which principals they run as."""
        return {
            "core-site.xml": {
                "fs.defaultFS": self.default_fs,
                "hadoop.security.authentication": "kerberos",
                "hadoop.security.authorization": "true",
                "hadoop.security.auth_to_local": self.auth_to_local(),
                "hadoop.rpc.protection": "privacy",
            },
            "hdfs-site.xml": {
                "dfs.namenode.rpc-address": self.address("nn_rpc"),
                "dfs.namenode.kerberos.principal": self.principal("nn"),
                "dfs.data.transfer.protection": "privacy",
                "dfs.http.policy": "HTTPS_ONLY",
                "dfs.namenode.https-address": self.address("nn_https"),
            },
            "yarn-site.xml": {
                "yarn.resourcemanager.address": self.address("rm"),
                "yarn.resourcemanager.scheduler.address": self.address("rm_scheduler"),
                "yarn.resourcemanager.resource-tracker.address": self.address("rm_tracker"),
                "yarn.resourcemanager.admin.address": self.address("rm_admin"),
                "yarn.resourcemanager.webapp.address": self.address("rm_web"),
                "yarn.resourcemanager.webapp.https.address": self.address("rm_web_https"),
                "yarn.resourcemanager.principal": self.principal("rm"),
                "yarn.nodemanager.principal": self.principal("nm"),
            },
        }

    def server_properties(self) -> dict[str, dict[str, str]]:
        """What the daemons read (per file): the clients' view, then each daemon's folders, keytabs and addresses,
        and the TLS stores of the HTTPS endpoints."""
        files = self.client_properties()
        files["hdfs-site.xml"].update(self._hdfs_server_properties())
        files["yarn-site.xml"].update(self._yarn_server_properties())
        return files | self._ssl_files()

    def _hdfs_server_properties(self) -> dict[str, str]:
        return {
            "dfs.replication": "1",
            "dfs.namenode.name.dir": str(self.base / "namenode"),
            "dfs.datanode.data.dir": str(self.base / "datanode"),
            "dfs.datanode.data.dir.perm": "700",
            "dfs.namenode.http-address": self.address("nn_http"),
            "dfs.namenode.safemode.extension": "0",
            "dfs.namenode.keytab.file": str(self.keytab("nn")),
            "dfs.datanode.kerberos.principal": self.principal("dn"),
            "dfs.datanode.keytab.file": str(self.keytab("dn")),
            "dfs.web.authentication.kerberos.principal": self.principal("HTTP"),
            "dfs.web.authentication.kerberos.keytab": str(self.keytab("HTTP")),
            "dfs.block.access.token.enable": "true",
            "dfs.datanode.address": self.address("dn_data"),
            "dfs.datanode.ipc.address": self.address("dn_ipc"),
            "dfs.datanode.http.address": self.address("dn_http"),
            "dfs.datanode.https.address": self.address("dn_https"),
            "dfs.datanode.hostname": HOST,
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.permissions.superusergroup": "supergroup",
        }

    def _yarn_server_properties(self) -> dict[str, str]:
        return {
            "yarn.resourcemanager.hostname": HOST,
            "yarn.resourcemanager.keytab": str(self.keytab("rm")),
            "yarn.resourcemanager.scheduler.class": FIFO_SCHEDULER,
            "yarn.scheduler.minimum-allocation-mb": "128",
            "yarn.scheduler.maximum-allocation-mb": str(NM_MEMORY_MB),
            "yarn.nodemanager.hostname": HOST,
            "yarn.nodemanager.address": self.address("nm"),
            "yarn.nodemanager.localizer.address": self.address("nm_localizer"),
            "yarn.nodemanager.webapp.address": self.address("nm_web"),
            "yarn.nodemanager.keytab": str(self.keytab("nm")),
            "yarn.nodemanager.container-executor.class": "org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor",
            "yarn.nodemanager.resource.memory-mb": str(NM_MEMORY_MB),
            "yarn.nodemanager.resource.cpu-vcores": str(NM_VCORES),
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "99.9",
            "yarn.nodemanager.local-dirs": str(self.base / "nm-local"),
            "yarn.nodemanager.log-dirs": str(self.base / "nm-logs"),
            "yarn.nodemanager.delete.debug-delay-sec": "600",  # keeps container folders for inspection
            "yarn.nodemanager.env-whitelist": "JAVA_HOME,PATH,LANG,TZ",
            "yarn.log-aggregation-enable": "false",
        }

    def _ssl_files(self) -> dict[str, dict[str, str]]:
        password = self._store_password()
        return {
            "ssl-server.xml": {
                "ssl.server.keystore.location": str(self.base / "tls" / "keystore.p12"),
                "ssl.server.keystore.type": "pkcs12",
                "ssl.server.keystore.password": password,
                "ssl.server.keystore.keypassword": password,
                "ssl.server.truststore.location": str(self.truststore),
                "ssl.server.truststore.type": "pkcs12",
                "ssl.server.truststore.password": password,
            },
            "ssl-client.xml": {
                "ssl.client.truststore.location": str(self.truststore),
                "ssl.client.truststore.type": "pkcs12",
                "ssl.client.truststore.password": password,
            },
        }

    @property
    def truststore(self) -> Path:
        return self.base / "tls" / "truststore.p12"

    def _store_password(self) -> str:
        return (self.base / "tls" / "store.password").read_text().strip()

    def write_config(self, ca: CertificateAuthority) -> None:
        for folder in ("conf", "logs", "tls", "namenode", "datanode", "nm-local", "nm-logs"):
            (self.base / folder).mkdir(parents=True, exist_ok=True, mode=0o700)
        self._write_stores(ca)
        for name, properties in self.server_properties().items():
            path = self.conf_dir / name
            path.write_text(site_xml(name, properties, f"the sandbox's Hadoop daemons: {name}"))
            path.chmod(0o600)
        (self.conf_dir / "log4j.properties").write_text(LOG4J)
        for app in WEBAPPS:  # HttpServer2 looks up webapps/<name> on the class path; Maven's hadoop-hdfs has none
            (self.base / "web" / "webapps" / app).mkdir(parents=True, exist_ok=True)

    def _write_stores(self, ca: CertificateAuthority) -> None:
        """A PKCS#12 keystore (a certificate for ``localhost`` from the sandbox CA) and a truststore holding the
        CA (made by keytool: Java trusts only certificates keytool marks as trusted), one random password."""
        password_file = self.base / "tls" / "store.password"
        write_secret(password_file)
        password = self._store_password().encode()
        cert_pem, key_pem = ca.issue([HOST])
        from cryptography import x509

        blob = pkcs12.serialize_key_and_certificates(
            b"localhost",
            ec_key(key_pem),
            x509.load_pem_x509_certificate(cert_pem),
            [ca.cert],
            serialization.BestAvailableEncryption(password),
        )
        keystore = self.base / "tls" / "keystore.p12"
        write_private(keystore, blob)
        ca_pem = self.base / "tls" / "ca.pem"
        ca.write_ca(ca_pem)
        keytool = str(Path(shutil.which(paths.java_executable()) or "java").resolve().parent / "keytool")
        res = subprocess.run(
            [
                keytool,
                "-importcert",
                "-noprompt",
                "-alias",
                "sandbox-ca",
                "-file",
                str(ca_pem),
                "-keystore",
                str(self.truststore),
                "-storetype",
                "PKCS12",
                "-storepass:file",
                str(password_file),
            ],
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            raise EnvironmentNotReady(f"keytool could not write the Hadoop truststore: {res.stderr.strip()}")

    def make_identities(self, kdc: KDC) -> None:
        existing = kdc.kadmin(self.realm, "listprincs")
        for service in ("nn", "dn", "HTTP", "rm", "nm"):
            if self.principal(service) not in existing.split():
                kdc.add_principal(self.principal(service))
        for keytab, services in ((self.keytab("nn"), ("nn", "dn", "HTTP")), (self.keytab("rm"), ("rm", "nm"))):
            for service in services:
                kdc.export_keytab(self.principal(service), keytab)


def write_client_conf(cluster: HadoopConfig) -> Path:
    """The client configuration folder (core, hdfs, yarn site files without server secrets)."""
    folder = cluster.base / "client-conf"
    folder.mkdir(exist_ok=True, mode=0o755)
    for name, properties in cluster.client_properties().items():
        (folder / name).write_text(site_xml(name, properties, f"a client of the sandbox's Hadoop: {name}"))
    return folder
