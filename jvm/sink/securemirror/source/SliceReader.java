package securemirror.source;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.unsafe.types.UTF8String;

import securemirror.sink.TaskPlan;

/**
 * One task: reads every range of its slice with one consumer, in the row form of Spark's Kafka source. A range is
 * done when the consumer's position reaches its end, which also covers offsets that hold no record to return
 * (transaction markers, records of aborted transactions under read_committed, compacted-away offsets); a done
 * partition is paused so the consumer fetches nothing past the batch.
 */
final class SliceReader implements PartitionReader<InternalRow> {
    private static final Duration POLL = Duration.ofMillis(500);
    private final SourceSettings settings;
    private final Slice slice;
    private final Map<String, Object> client;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Map<TopicPartition, Lane> open = new HashMap<>();
    private final HeaderArray headers = new HeaderArray();
    private ConsumerRecords<byte[], byte[]> polled = ConsumerRecords.empty();
    private Iterator<TopicPartition> partitions = Collections.emptyIterator();
    private Iterator<ConsumerRecord<byte[], byte[]>> records = Collections.emptyIterator();
    private Lane lane;
    private InternalRow row;
    private long progressed = System.currentTimeMillis();
    private boolean broken = true;
    private final long attempt;  // this Spark task attempt's id (-1 outside a task), under which its plan is noted

    /** One range being read. */
    private final class Lane {
        final Range range;
        final TopicPartition tp;
        final UTF8String topic;

        Lane(Range range) {
            this.range = range;
            this.tp = new TopicPartition(range.topic(), range.partition());
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
        List<TopicPartition> assigned = new ArrayList<>();
        for (Range range : slice.ranges()) {
            Lane each = new Lane(range);
            open.put(each.tp, each);
            assigned.add(each.tp);
        }
        if (consumer != null) {
            consumer.assign(assigned);
            open.values().forEach(each -> consumer.seek(each.tp, each.range.from()));
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
        broken = false;
    }

    @Override
    public boolean next() {
        for (;;) {
            if (records.hasNext()) {
                ConsumerRecord<byte[], byte[]> record = records.next();
                if (record.offset() < lane.range.from()) {
                    continue;
                }
                if (record.offset() >= lane.range.until()) {
                    done(lane);
                    records = Collections.emptyIterator();
                    continue;
                }
                row = lane.row(record);
                if (record.offset() + 1 >= lane.range.until()) {
                    done(lane);
                }
                return true;
            }
            if (partitions.hasNext()) {
                TopicPartition tp = partitions.next();
                lane = open.get(tp);
                records = lane == null ? Collections.emptyIterator() : polled.records(tp).iterator();
                continue;
            }
            settle();
            if (open.isEmpty()) {
                return false;
            }
            poll();
        }
    }

    private void done(Lane finished) {
        if (open.remove(finished.tp) != null) {
            consumer.pause(List.of(finished.tp));
        }
    }

    /** Ranges whose position reached the end without a record there to return (markers, aborted, compacted). */
    private void settle() {
        for (Lane each : new ArrayList<>(open.values())) {
            if (consumer.position(each.tp) >= each.range.until()) {
                done(each);
            }
        }
    }

    private void poll() {
        polled = Reads.poll(consumer, POLL, settings);
        long now = System.currentTimeMillis();
        if (!polled.isEmpty()) {
            progressed = now;
        } else if (now - progressed > settings.pollTimeoutMs) {
            // a timeout (Kafka's retriable kind): the source's brokers away, not records gone; the task is retried
            throw new org.apache.kafka.common.errors.TimeoutException("the mirror source read nothing from "
                + open.keySet() + " for " + settings.pollTimeoutMs + " ms, below the ends the batch was planned with");
        }
        partitions = polled.partitions().iterator();
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
        if (!broken && open.isEmpty()) {
            Consumers.giveBack(client, slice.slot(), consumer);
        } else {
            consumer.close(Duration.ZERO);
        }
    }
}
