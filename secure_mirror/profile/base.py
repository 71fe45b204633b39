"""What every section of the profile shares: the strict model base (unknown keys refused, values frozen), and the
rule for the maps of extra options (``client_options``, ``mirror.spark.conf``, ``mirror.mm2.properties``)."""

from __future__ import annotations

import re
from typing import Any, Union

from pydantic import BaseModel, ConfigDict

from secure_mirror.profile import policy
from secure_mirror.profile.fields import Problem

OptionValue = Union[str, int, float, bool]
# Keys an extra client option may not set: the profile's security and bootstrap settings own them.
# Config providers too: with one, any setting could be replaced at start by what a file or variable holds.
PROTECTED_OPTION = re.compile(
    r"^(bootstrap\.servers|security\.protocol|sasl\..*|ssl\..*|client\.dns\.lookup"
    r"|config\.providers(\..*)?)$"
)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def option_matches(pattern: re.Pattern[str], key: str) -> bool:
    """True when ``key``, or the part after any prefix (``producer.``, ``<alias>.admin.``), matches ``pattern``:
    MirrorMaker 2 and Kafka apply ``<alias>.producer.sasl.jaas.config`` as the producer's login module. Compared
    without case, as Spark's option map compares keys (``kafka.SASL.JAAS.CONFIG`` is ``kafka.sasl.jaas.config``)."""
    parts = key.lower().split(".")
    return any(pattern.match(".".join(parts[i:])) for i in range(len(parts)))


def protected_option(key: str) -> bool:
    """True when ``key`` sets a protected key (:data:`PROTECTED_OPTION`), after any prefix (:func:`option_matches`)."""
    return option_matches(PROTECTED_OPTION, key)


def option_keys(value: dict[str, Any], protected: Any, owner: str) -> dict[str, Any]:
    for key in value:
        if (reason := policy.option_key_problem(key)) is not None:
            raise Problem(key, reason)
        if protected(key):
            raise Problem(key, owner)
    return value
