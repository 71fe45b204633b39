"""Spark's UI is off in the rendered job unless the profile's mirror.spark.conf turns it on (render/spark.py
SPARK_UI_KEYS). tests/integration/test_run_mirror.py shows a running job serving no web page, and
test_metrics_live.py one with ``spark.ui.port`` serving Spark's Prometheus page."""

from __future__ import annotations

import pytest

from secure_mirror.profile import load_profile
from secure_mirror.render.spark import spark_conf, spark_submit
from tests.support.profiles import profile_data, write_profile


def _conf(tmp_path, **conf):
    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path, spark={"conf": conf} if conf else {})))
    return profile, spark_conf(profile, tmp_path / "out")


@pytest.mark.parametrize("master", ["local[2]", "yarn", "spark://127.0.0.1:7077"])
def test_the_ui_is_off_unless_asked_for(tmp_path, master):
    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path, spark={"master": master})))
    assert spark_conf(profile, tmp_path / "out")["spark.ui.enabled"] == "false"


def test_the_rendered_submit_command_turns_it_off(tmp_path):
    profile, _ = _conf(tmp_path)
    assert "spark.ui.enabled=false" in spark_submit(profile, tmp_path / "out")


@pytest.mark.parametrize(
    ("conf", "expected"),
    [
        ({"spark.ui.enabled": True}, "true"),
        ({"spark.ui.enabled": False}, "false"),
        ({"spark.ui.port": 4040}, None),  # a port asks for the UI: Spark's own default (on) stays
    ],
)
def test_a_profile_that_names_the_ui_decides(tmp_path, conf, expected):
    _, rendered = _conf(tmp_path, **conf)
    assert rendered.get("spark.ui.enabled") == expected
