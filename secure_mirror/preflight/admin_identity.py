"""The identity ``--as-admin`` audits with: another profile (its clusters' credentials), or options that
replace the mirror's credentials per side, e.g.
``source.principal=admin@SRC.EXAMPLE,source.keytab=/etc/sec/admin.keytab,target.username=ops,target.password=env:PW``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from secure_mirror.errors import BadInputError
from secure_mirror.profile import load_profile
from secure_mirror.profile.cluster import SIDES, Cluster, Side
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl, PasswordSasl

KEYS = {"principal", "keytab", "username", "password"}


def admin_clusters(profile: Profile, value: str) -> dict[Side, Cluster]:
    if Path(value).is_file():
        admin = load_profile(value)
        return {"source": admin.source, "target": admin.target}
    options = _parse(value)
    return {side: _with_credentials(profile.cluster(side), side, opts) for side, opts in options.items()}


def _parse(value: str) -> dict[Side, dict[str, str]]:
    options: dict[Side, dict[str, str]] = {}
    for number, item in enumerate(filter(None, (part.strip() for part in value.split(","))), 1):
        key, sep, val = item.partition("=")
        side, _, name = key.partition(".")
        known = next((s for s in SIDES if s == side), None)
        if not sep or known is None or name not in KEYS:  # the item may be a secret: not quoted
            raise BadInputError(
                f"--as-admin: item {number} (counting from 1, split at commas) is neither a profile "
                f"file nor SIDE.KEY=VALUE with SIDE source|target and KEY one of "
                f"{', '.join(sorted(KEYS))}"
            )
        options.setdefault(known, {})[name] = val
    return options


def _with_credentials(cluster: Cluster, side: str, opts: dict[str, str]) -> Cluster:
    sasl = cluster.sasl
    new: GssapiSasl | PasswordSasl
    try:
        if isinstance(sasl, GssapiSasl) and opts.keys() <= {"principal", "keytab"}:
            new = GssapiSasl.model_validate(
                {
                    "mechanism": "GSSAPI",
                    "service_name": sasl.service_name,
                    "principal": opts.get("principal", sasl.principal),
                    "keytab": opts.get("keytab", str(sasl.keytab)),
                }
            )
        elif isinstance(sasl, PasswordSasl) and opts.keys() <= {"username", "password"}:
            new = PasswordSasl.model_validate(
                {"mechanism": sasl.mechanism, "username": opts["username"], "password": opts["password"]}
            )
        else:
            raise BadInputError(
                f"--as-admin: {side} uses {cluster.mechanism}; give "
                + ("principal and keytab" if isinstance(sasl, GssapiSasl) else "username and password")
            )
    except ValidationError as exc:  # its str() quotes the input, which may be a literal password
        reasons = "; ".join(
            f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise BadInputError(f"--as-admin: the {side} admin credentials are not usable: {reasons}") from None
    except KeyError as exc:
        raise BadInputError(f"--as-admin: the {side} admin credentials are not usable: {exc} is missing") from None
    except ValueError:
        raise BadInputError(f"--as-admin: the {side} admin credentials are not usable; check each value") from None
    return cluster.model_copy(update={"sasl": new})
