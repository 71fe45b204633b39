package securemirror.sink;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;

/** Sent to each executor with the settings; makes one writer per task. */
final class MirrorWriterFactory implements DataWriterFactory, StreamingDataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final SinkSettings settings;

    MirrorWriterFactory(SinkSettings settings) {
        this.settings = settings;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        return new MirrorDataWriter(settings, partitionId);
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
        return new MirrorDataWriter(settings, partitionId);
    }

    @Override
    public String toString() {
        return "secure-mirror writer factory";
    }
}
