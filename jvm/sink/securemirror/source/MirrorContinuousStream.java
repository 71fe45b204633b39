package securemirror.source;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.streaming.ContinuousPartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.ContinuousStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;

/**
 * The driver's side of the mirror's source under Spark's continuous trigger. The query's partitions are spread over
 * {@code tasks} never-ending tasks by the same slots as the micro-batches' ({@link MirrorStream#slot}); each reads its
 * partitions with one consumer ({@link ContinuousSliceReader}), so the query needs as many task slots as it has
 * tasks, not as it has partitions. Partitions that appear on the selected topics are found within
 * {@value #RECHECK_MS} ms and make Spark plan the tasks again ({@link #needsReconfiguration}), reading the new ones
 * from their earliest offset. The positions live in the checkpoint, in the offsets' JSON of the micro-batches.
 */
final class MirrorContinuousStream extends SourceStream implements ContinuousStream {
    static final long RECHECK_MS = 5_000;
    private Set<TopicPartition> planned = Set.of();
    private long checked;

    MirrorContinuousStream(SourceSettings settings, String checkpointLocation) {
        super(settings, checkpointLocation);
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start) {
        Map<TopicPartition, Long> from = new HashMap<>(PartitionOffsets.of(start).offsets());
        List<TopicPartition> present = admin().partitions();
        lost(missing(from.keySet(), present));  // a partition of the last position gone from the source
        List<TopicPartition> fresh = present.stream().filter(tp -> !from.containsKey(tp)).toList();
        from.putAll(admin().earliest(fresh));
        from.keySet().retainAll(new HashSet<>(present));
        planned = Set.copyOf(present);
        checked = System.currentTimeMillis();
        return slices(from, tasks);
    }

    /** The tasks: each slot with partitions, its partitions read from {@code from} on (never to an end). */
    static Slice[] slices(Map<TopicPartition, Long> from, int tasks) {
        Map<Integer, List<Range>> slots = new HashMap<>();
        from.entrySet().stream().sorted(Map.Entry.comparingByKey(Comparator.comparing(TopicPartition::toString)))
            .forEach(entry -> slots.computeIfAbsent(MirrorStream.slot(entry.getKey(), tasks), s -> new ArrayList<>())
                .add(new Range(entry.getKey().topic(), entry.getKey().partition(), entry.getValue(), Long.MAX_VALUE)));
        return slots.entrySet().stream().sorted(Map.Entry.comparingByKey())
            .map(slot -> new Slice(slot.getKey(), List.copyOf(slot.getValue()), slot.getValue().size()))
            .toArray(Slice[]::new);
    }

    @Override
    public ContinuousPartitionReaderFactory createContinuousReaderFactory() {
        return new ContinuousReaderFactory(settings);
    }

    @Override
    public Offset mergeOffsets(PartitionOffset[] offsets) {
        Map<TopicPartition, Long> merged = new HashMap<>();
        for (PartitionOffset each : offsets) {
            merged.putAll(((SlotPositions) each).positions());
        }
        return new PartitionOffsets(merged);
    }

    /**
     * Spark asks every epoch; the source is asked at most every {@value #RECHECK_MS} ms: have partitions appeared
     * on (or gone from) the selected topics since the tasks were planned? Asked once, without riding through: a
     * source that does not answer within {@value #RECHECK_MS} ms is asked again next time, and Spark's epochs go on
     * meanwhile (the readers' consumers ride through on their own).
     */
    @Override
    public boolean needsReconfiguration() {
        long now = System.currentTimeMillis();
        if (now - checked < RECHECK_MS) {
            return false;
        }
        checked = now;
        try {
            return !Set.copyOf(admin().partitionsAsked(RECHECK_MS / 1000)).equals(planned);
        } catch (RuntimeException unanswered) {
            return false;
        }
    }

    @Override
    public String toString() {
        return "secure-mirror continuous source (" + tasks + " tasks)";
    }
}
