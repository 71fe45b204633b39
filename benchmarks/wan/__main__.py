"""``python -m benchmarks.wan``: what ``scripts/bench --wan`` runs."""

import sys

from benchmarks.wan.main import main

sys.exit(main())
