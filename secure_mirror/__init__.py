"""secure_mirror: mirror Kafka topics between Kerberos/SASL/TLS-secured clusters.

The flow: profile -> render -> preflight -> run -> verify, plus the sandbox that makes it testable.
"""

__version__ = "0.1.0"

import logging as _logging

_logging.getLogger("secure_mirror").addHandler(_logging.NullHandler())
