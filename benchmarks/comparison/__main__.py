"""``python -m benchmarks.comparison``: what ``scripts/bench`` runs without a scenario flag."""

import sys

from benchmarks.comparison.main import main

sys.exit(main())
