"""``python -m benchmarks.cutover``: what ``scripts/bench --cutover`` runs."""

import sys

from benchmarks.cutover.main import main

sys.exit(main())
