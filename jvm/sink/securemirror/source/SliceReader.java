package securemirror.source;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.unsafe.types.UTF8String;

import securemirror.sink.TaskPlan;

/**
 * One task: reads every range of its slice with one consumer, in the row form of Spark's Kafka source, through
 * {@link FetchAhead}: polled by the task itself, or, where the executor's Spark configuration allows a task to hold
 * records fetched ahead ({@value SourceSettings#FETCH_AHEAD}), on a thread of its own, so that the next fetch is in
 * flight while the task copies. Records past a range's end (written after the batch was planned) are left out here.
 */
final class SliceReader implements PartitionReader<InternalRow> {
    private final SourceSettings settings;
    private final Slice slice;
    private final Map<String, Object> client;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final FetchAhead ahead;
    private final Map<TopicPartition, Lane> lanes = new HashMap<>();
    private final HeaderArray headers = new HeaderArray();
    private Iterator<ConsumerRecord<byte[], byte[]>> records = Collections.emptyIterator();
    private Lane lane;
    private InternalRow row;
    private final long attempt;  // this Spark task attempt's id (-1 outside a task), under which its plan is noted

    /** One range being read. */
    private final class Lane {
        final Range range;
        final UTF8String topic;

        Lane(Range range) {
            this.range = range;
            this.topic = UTF8String.fromString(range.topic());
        }

        InternalRow row(ConsumerRecord<byte[], byte[]> record) {
            return Reads.row(record, topic, settings, headers);
        }
    }

    SliceReader(SourceSettings settings, Slice slice) {
        this.settings = settings;
        this.slice = slice;
        this.client = settings.consumerSettings(slice.partitions());
        this.consumer = slice.ranges().isEmpty() ? null : Consumers.take(client, slice.slot());
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (Range range : slice.ranges()) {
            TopicPartition tp = new TopicPartition(range.topic(), range.partition());
            lanes.put(tp, new Lane(range));
            ends.put(tp, range.until());
        }
        if (consumer != null) {
            consumer.assign(new ArrayList<>(ends.keySet()));
            lanes.forEach((tp, each) -> consumer.seek(tp, each.range.from()));
        }
        TaskContext task = TaskContext.get();
        this.attempt = task == null ? -1 : task.taskAttemptId();
        if (attempt >= 0) {
            Map<String, List<Integer>> planned = new HashMap<>();
            for (Range range : slice.ranges()) {
                if (range.from() < range.until()) {
                    planned.computeIfAbsent(range.topic(), topic -> new ArrayList<>()).add(range.partition());
                }
            }
            TaskPlan.note(attempt, planned);
        }
        this.ahead = consumer == null ? null
            : new FetchAhead(consumer, settings, ends, settings.wholeInResponse(client),
                             SourceSettings.fetchAheadBytes(),
                             "secure-mirror source slot " + slice.slot() + " fetch-ahead");
    }

    @Override
    public boolean next() throws IOException {
        for (;;) {
            if (records.hasNext()) {
                ConsumerRecord<byte[], byte[]> record = records.next();
                if (record.offset() < lane.range.from()) {
                    continue;
                }
                if (record.offset() >= lane.range.until()) {
                    records = Collections.emptyIterator();
                    continue;
                }
                row = lane.row(record);
                return true;
            }
            FetchAhead.Polled polled = take();
            if (polled == null) {
                return false;
            }
            lane = lanes.get(polled.tp());
            records = lane == null ? Collections.emptyIterator() : polled.records().iterator();
        }
    }

    private FetchAhead.Polled take() throws IOException {
        if (ahead == null) {
            return null;
        }
        try {
            return ahead.take();
        } catch (InterruptedException killed) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("the mirror source's task was interrupted while it waited for records");
        }
    }

    @Override
    public InternalRow get() {
        return row;
    }

    @Override
    public void close() {
        if (attempt >= 0) {
            TaskPlan.forget(attempt);
        }
        if (consumer == null) {
            return;
        }
        if (ahead.stop()) {
            Consumers.giveBack(client, slice.slot(), consumer);
        } else {
            consumer.close(Duration.ZERO);
        }
    }
}
