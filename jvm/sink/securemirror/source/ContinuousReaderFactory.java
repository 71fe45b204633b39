package securemirror.source;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.streaming.ContinuousPartitionReader;
import org.apache.spark.sql.connector.read.streaming.ContinuousPartitionReaderFactory;

/** Sent to each executor with the settings; makes one never-ending reader per slot of a continuous query. */
final class ContinuousReaderFactory implements ContinuousPartitionReaderFactory {
    private static final long serialVersionUID = 1L;
    private final SourceSettings settings;

    ContinuousReaderFactory(SourceSettings settings) {
        this.settings = settings;
    }

    @Override
    public ContinuousPartitionReader<InternalRow> createReader(InputPartition partition) {
        return new ContinuousSliceReader(settings, (Slice) partition);
    }

    @Override
    public String toString() {
        return "secure-mirror continuous reader factory";
    }
}
