"""Running the mirror: the Spark job (``job.py``), its launcher (``secure-mirror run``) and the lag report."""
