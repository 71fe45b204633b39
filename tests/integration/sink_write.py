"""Write source topics to the target with the mirror's own sink (jvm/sink) in a Spark batch job, with the options
`render` wrote. Each write named in the JSON argument reads its topic from the beginning and writes it with the given
sink options; a write listed twice is a replay. Prints, per write, the figures the sink reported. Run as a script so
the Spark JVM is this test's own."""

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

SINK = "securemirror.sink.MirrorSink"


def main(spark_dir: str, writes_json: str) -> None:
    spark_dir = Path(spark_dir)
    conf = json.loads((spark_dir / "spark-conf.json").read_text())
    source = json.loads((spark_dir / "source-options.json").read_text())
    sink = json.loads((spark_dir / "sink-options.json").read_text())
    builder = SparkSession.builder.master("local[2]").appName("sink-write")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.config("spark.ui.enabled", "false").getOrCreate()
    source = {k: v for k, v in source.items() if k not in ("subscribePattern", "startingOffsets")}
    sink = {k: v for k, v in sink.items() if k.startswith("kafka.")}
    reports = []
    for index, write in enumerate(json.loads(writes_json)):
        rows = (
            spark.read.format("kafka")
            .options(**source)
            .option("subscribe", write["topic"])
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .load()
        )
        key = f"write-{index}"
        rows.write.format(SINK).mode("append").options(**sink).options(**write["options"]).option(
            "mirror.report-key", key
        ).save()
        reports.append(json.loads(spark._jvm.securemirror.sink.Reports.take(key)))
    print(json.dumps(reports))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:3])
