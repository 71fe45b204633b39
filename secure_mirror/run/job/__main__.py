"""The job's script: ``spark-submit .../secure_mirror/run/job/__main__.py --options-dir DIR`` (the rendered
``spark/spark-submit.sh``), or ``python -m secure_mirror.run.job``."""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script by spark-submit: make the package importable
    _here = Path(__file__).resolve()
    if len(_here.parents) > 3:  # in cluster mode the script is a shipped copy; the package comes with --py-files
        sys.path.insert(0, str(_here.parents[3]))

from secure_mirror.run.job.entry import main

sys.exit(main())
