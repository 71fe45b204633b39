import sys

from benchmarks.groups.main import main

sys.exit(main())
