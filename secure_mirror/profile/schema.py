"""The JSON Schema of the profile, generated from the models (committed as schema/profile.schema.json)."""

from __future__ import annotations

import json

from secure_mirror.profile.models import Profile

SCHEMA_ID = "https://secure-mirror.invalid/schema/profile.schema.json"


def profile_json_schema() -> dict:
    schema = Profile.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def profile_json_schema_text() -> str:
    return json.dumps(profile_json_schema(), indent=2, sort_keys=True) + "\n"
