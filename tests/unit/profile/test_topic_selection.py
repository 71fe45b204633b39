"""Pre-flight resolves the topic selection in Python; Spark subscribes with the Java pattern. They must agree."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from secure_mirror.profile import TopicSelection

TOPICS = [
    "demo.a",
    "demo.b",
    "demoX",
    "demo.",
    "__consumer_offsets",
    "__demo.x",
    "orders",
    "orders.eu",
    "orders-eu",
    "ORDERS",
    "payments.v1",
    "payments.v10",
    "a.b.c",
    "x_y-z",
    "demo.internal",
    "long" + "x" * 200,
]
SELECTIONS = [
    ("demo\\..*", None),
    (".*", None),
    ("orders, payments\\.v1", None),
    ("demo\\..*", "demo\\.internal"),
    ("(?i:orders)", None),
    ("payments\\.v\\d+", "payments\\.v10"),
    ("[a-c]\\..*", None),
    (".*", "demo.*,x.*"),
]
JAVA = """
import java.util.regex.Pattern;
public class Select {
  public static void main(String[] args) {
    int split = java.util.Arrays.asList(args).indexOf("--");
    for (int k = 0; k < split; k++) {  // one line per pattern: the topics it matches, space-separated
      Pattern p = Pattern.compile(args[k]);
      StringBuilder out = new StringBuilder();
      for (int i = split + 1; i < args.length; i++) if (p.matcher(args[i]).matches()) out.append(args[i]).append(' ');
      System.out.println(out.toString().trim());
    }
  }
}
"""


@pytest.mark.jvm
def test_python_selection_matches_java_pattern_matches(tmp_path):
    if not shutil.which("java"):
        pytest.skip("java is missing")
    source = tmp_path / "Select.java"
    source.write_text(JAVA)
    selections = [TopicSelection.parse(include, exclude) for include, exclude in SELECTIONS]
    lines = subprocess.run(
        ["java", str(source), *(s.java_pattern() for s in selections), "--", *TOPICS],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    for selection, line in zip(selections, lines, strict=True):
        assert selection.select(TOPICS) == sorted(line.split()), selection
