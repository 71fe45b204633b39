package securemirror.source;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.ContinuousStream;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import securemirror.sink.SinkSettings;

/**
 * The mirror's Spark source (DataSource V2, micro-batch and continuous reads):
 * {@code format("securemirror.source.MirrorSource")}.
 * It delivers the rows of Spark's Kafka source (key, value, topic, partition, offset, timestamp, timestampType,
 * headers) with its offsets' JSON, but plans each batch as a fixed number of tasks that each read many partitions
 * with one kept consumer ({@link MirrorStream}), or under a continuous trigger as a fixed number of never-ending tasks
 * ({@link MirrorContinuousStream}); see {@link SourceSettings} for its options.
 */
public class MirrorSource implements TableProvider {
    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SinkSettings.SOURCE_ROW;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new SourceTable();
    }

    /** The source cluster as a table one can only stream from. */
    static final class SourceTable implements SupportsRead {
        @Override
        public String name() {
            return "secure-mirror source";  // no setting of the source: this name is printed in plans
        }

        @Override
        @SuppressWarnings("deprecation")  // Table.schema(): Spark 4 prefers columns(), whose default reads this
        public StructType schema() {
            return SinkSettings.SOURCE_ROW;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.MICRO_BATCH_READ, TableCapability.CONTINUOUS_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            SourceSettings settings = SourceSettings.of(options.asCaseSensitiveMap());
            return () -> new Scan() {
                @Override
                public StructType readSchema() {
                    return SinkSettings.SOURCE_ROW;
                }

                @Override
                public String description() {
                    return "secure-mirror source";
                }

                @Override
                public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
                    return new MirrorStream(settings, checkpointLocation);
                }

                @Override
                public ContinuousStream toContinuousStream(String checkpointLocation) {
                    return new MirrorContinuousStream(settings, checkpointLocation);
                }
            };
        }
    }
}
