package securemirror.source;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.ReportsSourceMetrics;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;

/**
 * The driver's side of the mirror's source. Each micro-batch is planned as {@code tasks} tasks, not one per
 * topic-partition: a partition always goes to the same slot ({@link #slot}), and each task reads all its slot's
 * ranges with one consumer, which the executor keeps for the slot's next task ({@link Consumers}). The cost of a
 * batch follows its records; a partition adds one entry to a fetch request, not a task, a consumer and a login.
 * Partitions and topics that appear while the query runs are found at the next batch and read from their earliest
 * offset.
 */
final class MirrorStream extends SourceStream
        implements MicroBatchStream, SupportsTriggerAvailableNow, ReportsSourceMetrics {
    private Map<TopicPartition, Long> availableNow;  // the end of a Trigger.AvailableNow query, fixed at its start
    private volatile Map<TopicPartition, Long> lastLatest = Map.of();

    MirrorStream(SourceSettings settings, String checkpointLocation) {
        super(settings, checkpointLocation);
    }

    @Override
    public Offset latestOffset() {
        throw new UnsupportedOperationException("the mirror source is asked with latestOffset(start, limit)");
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
        return settings.maxOffsetsPerTrigger > 0 ? ReadLimit.maxRows(settings.maxOffsetsPerTrigger)
                                                 : ReadLimit.allAvailable();
    }

    @Override
    public void prepareForTriggerAvailableNow() {
        availableNow = admin().latest(admin().partitions());
    }

    @Override
    public Offset latestOffset(Offset startOffset, ReadLimit limit) {
        Map<TopicPartition, Long> start = PartitionOffsets.of(startOffset).offsets();
        Map<TopicPartition, Long> latest = availableNow != null ? availableNow : admin().latest(admin().partitions());
        lastLatest = latest;
        Map<TopicPartition, Long> from = new HashMap<>(start);
        List<TopicPartition> fresh = latest.keySet().stream().filter(tp -> !start.containsKey(tp)).toList();
        from.putAll(admin().earliest(fresh));
        Map<TopicPartition, Long> end = new HashMap<>(latest);  // a partition gone from the source is left out: lost()
        if (limit instanceof ReadMaxRows max) {
            end.putAll(Limits.capped(from, end, max.maxRows()));
        }
        return new PartitionOffsets(end);
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start, Offset end) {
        Map<TopicPartition, Long> until = PartitionOffsets.of(end).offsets();
        Map<TopicPartition, Long> from = new HashMap<>(PartitionOffsets.of(start).offsets());
        List<TopicPartition> fresh = until.keySet().stream().filter(tp -> !from.containsKey(tp)).toList();
        from.putAll(admin().earliest(fresh));
        lost(from, until);
        return slices(from, until, tasks);
    }

    /**
     * The batch's tasks: for each slot, the ranges with records between {@code from} and {@code until}, and how many
     * of the partitions go to the slot (with records or not).
     */
    static Slice[] slices(Map<TopicPartition, Long> from, Map<TopicPartition, Long> until, int tasks) {
        List<List<Range>> slots = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            slots.add(new ArrayList<>());
        }
        int[] assigned = new int[tasks];
        until.forEach((tp, last) -> {
            long first = from.get(tp);
            int slot = slot(tp, tasks);
            assigned[slot]++;
            if (last > first) {
                slots.get(slot).add(new Range(tp.topic(), tp.partition(), first, last));
            }
        });
        // every slot is a task, empty or not: task i of every batch is slot i, which the sink's producer per task
        // relies on (jvm/sink TaskTransaction); an empty task opens nothing
        Slice[] planned = new Slice[tasks];
        for (int i = 0; i < tasks; i++) {
            planned[i] = new Slice(i, List.copyOf(slots.get(i)), assigned[i]);
        }
        return planned;
    }

    /**
     * Records the batch needs that the source no longer has: a partition of the previous end missing from this one
     * (its topic was deleted), or an end before the start (the partition was truncated). Fail (failOnDataLoss, with
     * the words the job's exit sentence looks for), or read what is left.
     */
    private void lost(Map<TopicPartition, Long> from, Map<TopicPartition, Long> until) {
        List<String> problems = missing(from.keySet(), until.keySet());
        until.forEach((tp, last) -> {
            if (last < from.get(tp)) {
                problems.add(tp + " ends at " + last + ", before offset " + from.get(tp) + " the mirror had reached");
            }
        });
        lost(problems);
        until.forEach((tp, last) -> from.computeIfPresent(tp, (k, first) -> Math.min(first, last)));
    }

    /**
     * The task slot of a partition: the partitions of one topic go round the slots in order from a place its name
     * chooses, so a topic's partitions spread evenly and a partition keeps its slot when partitions are added.
     */
    static int slot(TopicPartition tp, int tasks) {
        return Math.floorMod(tp.topic().hashCode() + tp.partition(), tasks);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new SliceReaderFactory(settings);
    }

    @Override
    public Map<String, String> metrics(Optional<Offset> latestConsumed) {
        return Limits.behind(latestConsumed.map(o -> PartitionOffsets.of(o).offsets()).orElse(Map.of()), lastLatest);
    }

    @Override
    public String toString() {
        return "secure-mirror source (" + tasks + " tasks)";
    }
}
