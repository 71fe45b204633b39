"""``python -m benchmarks.failover``: what ``scripts/bench --failover`` runs."""

import sys

from benchmarks.failover.main import main

sys.exit(main())
