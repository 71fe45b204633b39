"""``python -m benchmarks.scale``: what ``scripts/bench --scale`` runs."""

import sys

from benchmarks.scale.main import main

sys.exit(main())
