"""Running the mirror: the Spark job (the ``job`` package), its launcher (``secure-mirror run``) and the lag report."""
