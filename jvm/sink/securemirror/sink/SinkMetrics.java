package securemirror.sink;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/** The sink's figures in Spark's SQL UI (per write, summed or the largest over its tasks). */
public final class SinkMetrics {
    private SinkMetrics() {
    }

    static CustomMetric[] supported() {
        return new CustomMetric[] {new Records(), new Bytes(), new Skipped(), new AgeMax()};
    }

    static CustomTaskMetric[] values(long records, long bytes, long skipped, long ageMax) {
        return new CustomTaskMetric[] {
            task(Records.NAME, records), task(Bytes.NAME, bytes), task(Skipped.NAME, skipped), task(AgeMax.NAME, ageMax)};
    }

    private static CustomTaskMetric task(String name, long value) {
        return new CustomTaskMetric() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public long value() {
                return value;
            }
        };
    }

    public static final class Records extends CustomSumMetric {
        static final String NAME = "mirroredRecords";

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "records written to the target";
        }
    }

    public static final class Bytes extends CustomSumMetric {
        static final String NAME = "mirroredBytes";

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "key and value bytes written to the target";
        }
    }

    public static final class Skipped extends CustomSumMetric {
        static final String NAME = "skippedRecords";

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "records skipped: the target already held them (exactly_once replay)";
        }
    }

    public static final class AgeMax implements CustomMetric {
        static final String NAME = "recordAgeMaxMs";

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "largest record age (ms) when the sink took it";
        }

        @Override
        public String aggregateTaskMetrics(long[] taskMetrics) {
            long max = 0;
            for (long value : taskMetrics) {
                max = Math.max(max, value);
            }
            return Long.toString(max);
        }
    }
}
