package securemirror.source;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;

/** Sent to each executor with the settings; makes one reader per task. */
final class SliceReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;
    private final SourceSettings settings;

    SliceReaderFactory(SourceSettings settings) {
        this.settings = settings;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return new SliceReader(settings, (Slice) partition);
    }

    @Override
    public String toString() {
        return "secure-mirror source reader factory";
    }
}
