package securemirror.source;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

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

    /** The partitions of {@code had} that {@code present} lacks (their topic was deleted), each said in words. */
    static List<String> missing(Set<TopicPartition> had, Collection<TopicPartition> present) {
        Set<TopicPartition> now = Set.copyOf(present);
        List<String> out = new ArrayList<>();
        had.stream().filter(tp -> !now.contains(tp)).sorted(Comparator.comparing(TopicPartition::toString))
            .forEach(tp -> out.add(tp + " is no longer on the source"));
        return out;
    }

    /**
     * Records the query needs that the source no longer has ({@code problems}, in words): fail (failOnDataLoss, with
     * the words the job's exit sentence looks for, {@link Reads#LOST}), or go on with what is left.
     */
    final void lost(List<String> problems) {
        if (!problems.isEmpty() && settings.failOnDataLoss) {
            throw new IllegalStateException(Reads.LOST + String.join("; ", problems.subList(0, Math.min(5,
                problems.size()))));
        }
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
