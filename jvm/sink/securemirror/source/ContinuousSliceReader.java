package securemirror.source;

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.streaming.ContinuousPartitionReader;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One never-ending task of a continuous query: reads its slot's partitions with one consumer, from the epoch's start
 * positions on, and hands each record on as it arrives. The consumer is only polled and never seeks or asks for
 * offsets between polls, so its next fetch is already in flight while the records of the last are handed on: across a
 * link a record waits about half a round trip on top of the broker's fetch wait, not a round trip per question.
 * (Spark's own continuous Kafka reader seeks before every poll and asks the partition's earliest and latest offsets
 * after it: three round trips a poll, benchmarks/NOTES.md section 24.)
 */
final class ContinuousSliceReader implements ContinuousPartitionReader<InternalRow> {
    private static final Duration POLL = Duration.ofMillis(100);  // between polls: is the task still wanted?
    private final SourceSettings settings;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final ReentrantLock polling = new ReentrantLock();  // the consumer is one thread's at a time
    private final TopicPartition[] partitions;
    private final UTF8String[] topics;
    private final Map<TopicPartition, Integer> index = new HashMap<>();
    private final long[] next;
    private final HeaderArray headers = new HeaderArray();
    private ConsumerRecords<byte[], byte[]> polled = ConsumerRecords.empty();
    private Iterator<TopicPartition> polledPartitions = Collections.emptyIterator();
    private Iterator<ConsumerRecord<byte[], byte[]>> records = Collections.emptyIterator();
    private SlotPositions.Poll poll;
    private int step = -1;
    private int lane = -1;
    private InternalRow row;
    private SlotPositions at;
    private volatile boolean closing;
    private boolean closed;

    ContinuousSliceReader(SourceSettings settings, Slice slice) {
        this.settings = settings;
        List<Range> ranges = slice.ranges();
        this.partitions = new TopicPartition[ranges.size()];
        this.topics = new UTF8String[ranges.size()];
        this.next = new long[ranges.size()];
        for (int i = 0; i < ranges.size(); i++) {
            Range range = ranges.get(i);
            partitions[i] = new TopicPartition(range.topic(), range.partition());
            topics[i] = UTF8String.fromString(range.topic());
            next[i] = range.from();
            index.put(partitions[i], i);
        }
        this.consumer = new KafkaConsumer<>(new HashMap<>(settings.consumerSettings(slice.partitions())),
                                            new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.assign(List.of(partitions));
        for (int i = 0; i < partitions.length; i++) {
            consumer.seek(partitions[i], next[i]);
        }
        this.poll = new SlotPositions.Poll(partitions, next.clone(), 0);
        this.at = new SlotPositions(poll, -1, 0);
    }

    @Override
    public boolean next() {
        for (;;) {
            if (records.hasNext()) {
                ConsumerRecord<byte[], byte[]> record = records.next();
                if (record.offset() < next[lane]) {
                    continue;  // already handed on (not expected: the consumer never seeks back)
                }
                next[lane] = record.offset() + 1;
                row = Reads.row(record, topics[lane], settings, headers);
                at = new SlotPositions(poll, step, next[lane]);
                return true;
            }
            if (lane >= 0 && step >= 0) {
                poll.ends[step] = next[lane];  // the step's last position, before the next step's records
            }
            if (polledPartitions.hasNext()) {
                TopicPartition tp = polledPartitions.next();
                Integer found = index.get(tp);
                lane = found == null ? -1 : found;
                records = found == null ? Collections.emptyIterator() : polled.records(tp).iterator();
                if (found != null) {
                    poll.order[++step] = lane;
                }
                continue;
            }
            if (!pollOnce()) {
                return false;
            }
        }
    }

    /**
     * Poll until records come; false when the task is stopped (killed, completed, the reader closed, or this thread
     * interrupted: Spark interrupts the reader's thread after closing the reader).
     */
    private boolean pollOnce() {
        TaskContext task = TaskContext.get();
        for (;;) {
            boolean stopped = task != null && (task.isInterrupted() || task.isCompleted());
            if (closing || stopped || Thread.currentThread().isInterrupted()) {
                closeIfAsked();
                return false;
            }
            polling.lock();
            try {
                polled = Reads.poll(consumer, POLL, settings);
            } catch (WakeupException | InterruptException woken) {
                if (woken instanceof InterruptException) {
                    Thread.currentThread().interrupt();
                }
                polled = ConsumerRecords.empty();
            } finally {
                polling.unlock();
            }
            if (!polled.isEmpty()) {
                poll = new SlotPositions.Poll(partitions, next.clone(), polled.partitions().size());
                step = -1;
                lane = -1;
                polledPartitions = polled.partitions().iterator();
                return true;
            }
        }
    }

    @Override
    public InternalRow get() {
        return row;
    }

    @Override
    public PartitionOffset getOffset() {
        return at;
    }

    /**
     * Spark closes the reader from the task's thread while the reader's own thread may be polling; the consumer is
     * closed by whichever thread holds it (a poll in progress is woken up and closes it when it returns).
     */
    @Override
    public void close() {
        closing = true;
        if (polling.tryLock()) {
            try {
                closeConsumer();
            } finally {
                polling.unlock();
            }
        } else {
            consumer.wakeup();
        }
    }

    private void closeIfAsked() {
        if (closing) {
            polling.lock();
            try {
                closeConsumer();
            } finally {
                polling.unlock();
            }
        }
    }

    private void closeConsumer() {
        if (!closed) {
            closed = true;
            consumer.close(Duration.ZERO);
        }
    }
}
