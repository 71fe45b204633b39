"""The mirror job: a Spark Structured Streaming query from the source Kafka cluster to the target one.

Run by the rendered ``spark/spark-submit.sh`` (``job/__main__.py --options-dir DIR``); ``secure-mirror run``
launches that same script. DIR holds ``source-options.json`` and ``sink-options.json`` (each with its own identity
in ``kafka.sasl.jaas.config``) and ``job.json`` (rename rule, partition policy, provenance, profile fingerprint).

Each micro-batch: the records (key, value, headers) get the renamed target topic, built with Spark SQL
expressions; missing target topics are created with the source's partition count; the partition is kept when
asked (or, with ``auto``, when both topics have the same number of partitions); the batch is written with the
no-data-loss producer settings of ``sink-options.json``. Offsets are committed to the checkpoint only after the
write succeeded (at least once). SIGTERM, SIGINT or a ``stop`` file in ``--control-dir`` stop the query
between two batches.

The package, in the order a run meets it:

- ``entry``: arguments, the Spark session, the run from start to exit code (``__main__`` runs it);
- ``options``: the option files render wrote;
- ``checkpoint_access``: the checkpoint folder through Hadoop's FileSystem, and its fingerprint;
- ``planning``: target topics (names, creation, the keep-partition decision, their shape), asking through
  ``admin_answers`` (what an admin call's error means);
- ``deleted_topics``: source and target topics deleted while the job runs;
- ``sink``: the streaming query and how each batch is written;
- ``control``: where the launcher and the job meet (pid, stop request, result);
- ``outcome``: refusals and failures as exit codes and one sentence.

Exit codes (``errors.py``): 0 caught up or stopped on request (SIGTERM, stop file), 1 the query failed, 2 refused
(checkpoint of another profile, missing job settings), 5 refused by a cluster (authorization, topic missing and
not creatable, source data lost): restarting does not help, 130 interrupted (SIGINT).
"""
