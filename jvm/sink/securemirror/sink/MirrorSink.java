package securemirror.sink;

import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The mirror's Spark sink (DataSource V2, batch and streaming writes): {@code format("securemirror.sink.MirrorSink")}.
 * It takes the rows of Spark's Kafka source as they are (key, value, topic, partition, offset, timestamp,
 * headers) and writes each to the target cluster with its source timestamp, under the renamed topic, in the same
 * partition where the rule keeps it; see {@link SinkSettings} for its options.
 */
public class MirrorSink implements TableProvider {
    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SinkSettings.SOURCE_ROW;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new MirrorTable();
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }
}
