"""Copy one topic from the source cluster to the target cluster in a Spark batch job, with the options
`render` wrote: one JVM, two Kerberos identities (per-client kafka.sasl.jaas.config). Run as a script so
the Spark JVM is this test's own."""

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession


def main(spark_dir: str, source_topic: str, target_topic: str) -> None:
    spark_dir = Path(spark_dir)
    conf = json.loads((spark_dir / "spark-conf.json").read_text())
    source = json.loads((spark_dir / "source-options.json").read_text())
    sink = json.loads((spark_dir / "sink-options.json").read_text())
    builder = SparkSession.builder.master("local[2]").appName("two-identities")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.config("spark.ui.enabled", "false").getOrCreate()
    source = {k: v for k, v in source.items() if k not in ("subscribePattern", "startingOffsets")}
    df = (
        spark.read.format("kafka")
        .options(**source)
        .option("subscribe", source_topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )
    rows = df.select("key", "value", "headers").cache()
    count = rows.count()
    sink = {k: v for k, v in sink.items() if not k.startswith("checkpoint")}
    rows.write.format("kafka").options(**sink).option("topic", target_topic).save()
    print(json.dumps({"copied": count}))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
