package securemirror.sink;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;

/**
 * The target cluster as a Spark table one can only append to. As a streaming sink it reports the last batch's
 * per-topic-partition figures in the query's progress ({@code sink.metrics}, see {@link Figures#toMetrics}).
 */
public class MirrorTable implements SupportsWrite, ReportsSinkMetrics {
    private volatile Map<String, String> lastBatch = Map.of();

    @Override
    public String name() {
        return "secure-mirror target";  // no setting of the sink: this name is printed in plans
    }

    @Override
    @SuppressWarnings("deprecation")  // Table.schema(): Spark 4 prefers columns(), whose default reads this
    public StructType schema() {
        return SinkSettings.SOURCE_ROW;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.STREAMING_WRITE,
                          TableCapability.ACCEPT_ANY_SCHEMA);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        SinkSettings settings = SinkSettings.of(info.options().asCaseSensitiveMap(), info.schema());
        MirrorTable table = this;
        return new WriteBuilder() {
            @Override
            public Write build() {
                return new MirrorWrite(settings, table);
            }
        };
    }

    void reported(Map<String, String> metrics) {
        lastBatch = metrics;
    }

    @Override
    public Map<String, String> metrics() {
        return lastBatch;
    }
}
