package securemirror.source;

import java.util.List;

import org.apache.kafka.common.TopicPartition;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.SparkDataStream;

/**
 * What the driver's side of the mirror's source is under either trigger ({@link MirrorStream} for micro-batches,
 * {@link MirrorContinuousStream} for continuous processing): its settings, its tasks (the slots partitions go to), one
 * admin client for the query, the first positions (kept in the checkpoint) and their JSON. Nothing is committed to
 * the source: the positions live in the checkpoint, as with Spark's Kafka source.
 */
abstract class SourceStream implements SparkDataStream {
    final SourceSettings settings;
    final String checkpointLocation;
    final int tasks;
    private SourceAdmin admin;

    SourceStream(SourceSettings settings, String checkpointLocation) {
        this.settings = settings;
        this.checkpointLocation = checkpointLocation;
        this.tasks = settings.tasks > 0 ? settings.tasks : Math.max(1, SparkContext.getOrCreate().defaultParallelism());
    }

    final SourceAdmin admin() {
        if (admin == null) {
            admin = new SourceAdmin(settings);
        }
        return admin;
    }

    @Override
    public final Offset initialOffset() {
        return InitialOffsets.readOrWrite(checkpointLocation, () -> {
            List<TopicPartition> partitions = admin().partitions();
            return new PartitionOffsets(settings.latest ? admin().latest(partitions) : admin().earliest(partitions));
        });
    }

    @Override
    public final Offset deserializeOffset(String json) {
        return PartitionOffsets.parse(json);
    }

    @Override
    public final void commit(Offset end) {
        // the checkpoint holds the positions; the source cluster is not told
    }

    @Override
    public final void stop() {
        if (admin != null) {
            admin.close();
        }
    }
}
