import sys

from secure_mirror.cli import main

sys.exit(main())
