package securemirror.sink;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One task's writer. Each source partition in the task's rows is a {@link Lane}: its target topic and partition
 * rule, its figures and (exactly_once) its own transactional producer. exactly_once, per lane: the transactional
 * id is derived from the profile and the source partition, so {@code initTransactions} fences any older task
 * with the same id and aborts what it left open; then the lane reads the next source offset the target already
 * holds (committed with the records, in the consumer group of the same name) and skips rows before it; at
 * commit it sends the new position into the transaction and commits records and position together.
 * <p>
 * With an offset map topic ({@link SinkSettings#offsetMapTopic}), each lane whose partition is kept also notes which
 * source offsets it wrote at which target offsets ({@link OffsetMap}); once the write's records are acknowledged, its
 * segments go to the map topic: into the transaction before its commit with exactly_once, so map and records commit
 * or abort together; sent and flushed before the task reports its commit otherwise.
 */
final class MirrorDataWriter implements DataWriter<InternalRow> {
    private final SinkSettings settings;
    private final int slot;
    private TaskTransaction task;  // exactly_once with a producer per task: begun with the first lane
    private Map<String, Object> client;  // the producers' settings, with the delegation token current at first use
    private final Map<String, Lane> lanes = new HashMap<>();
    private Lane last;
    private KafkaProducer<byte[], byte[]> shared;
    /** The task's totals over its lanes, kept as rows go by: Spark asks for them every 100 rows. */
    private long records, bytes, skipped, ageMax;

    MirrorDataWriter(SinkSettings settings, int slot) {
        this.settings = settings;
        this.slot = slot;
    }

    /** The clients' settings, read when the first producer is needed (as late as possible: a delegation token is
     * valid for a while after the driver sends the next one, and a task may start well before it writes). */
    private Map<String, Object> client() {
        if (client == null) {
            client = settings.clientSettings();
            Producers.retireOlderLogins(client);
        }
        return client;
    }

    /** One source topic-partition in this task. */
    private final class Lane implements Callback {
        final UTF8String topicText;
        final String topic;
        final int partition;
        final String target;
        final boolean kept;
        final Figures figures;
        final String transactionalId;
        final OffsetMap map;  // null unless the partition is kept and the sink keeps an offset map
        KafkaProducer<byte[], byte[]> producer;
        long committed = -1;
        long positionSent = -1;  // producer per task: the next offset committed with a transaction of this task
        boolean done;
        volatile Exception failure;

        Lane(UTF8String topicText, int partition) throws IOException {
            this.topicText = topicText.clone();
            this.topic = topicText.toString();
            this.partition = partition;
            this.target = settings.targetTopic(topic);
            this.kept = settings.kept.contains(topic);
            this.figures = new Figures(topic, partition, target, kept);
            this.map = kept && settings.offsetMapTopic != null ? new OffsetMap() : null;
            this.transactionalId = settings.exactlyOnce ? settings.transactionalId(topic, partition) : null;
            if (settings.producerPerTask) {
                this.producer = task().producer;
                this.committed = task.position(topic, partition, target, kept,
                    kept ? producer.partitionsFor(target).size() : 0);
            } else {
                this.producer = settings.exactlyOnce ? begin() : sharedProducer();
            }
        }

        private KafkaProducer<byte[], byte[]> begin() throws IOException {
            Producers.Idle idle = Producers.takeIdle(client(), transactionalId);
            if (idle != null) {
                try {
                    idle.producer().beginTransaction();
                    committed = idle.next();
                    return idle.producer();
                } catch (RuntimeException unusable) {
                    idle.producer().close(Duration.ZERO);  // start afresh below
                }
            }
            KafkaProducer<byte[], byte[]> own = Producers.transactional(client(), transactionalId);
            producer = own;
            try {
                own.initTransactions();
                committed = Producers.committed(client(), transactionalId, position());
                own.beginTransaction();
            } catch (InterruptedException error) {
                own.close(Duration.ZERO);
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while starting the transaction of " + topic + "-" + partition, error);
            } catch (Exception error) {
                own.close(Duration.ZERO);
                throw new IOException("could not start the transaction of " + topic + "-" + partition + ": " + error, error);
            }
            return own;
        }

        /** Where the lane's source position is kept on the target: partition 0 of its target topic, in its group. */
        TopicPartition position() {
            return new TopicPartition(target, 0);
        }

        @Override
        public void onCompletion(RecordMetadata metadata, Exception exception) {
            if (exception != null) {
                if (failure == null) {
                    failure = exception;
                }
            } else if (map != null) {
                map.acknowledged(metadata.hasOffset() ? metadata.offset() : -1);
            }
        }

        /** Sends the lane's offset map segments (after its records are acknowledged); how many. */
        int sendMap(KafkaProducer<byte[], byte[]> to, Callback callback) {
            return map == null ? 0 : map.send(to, settings.offsetMapTopic, topic, partition, target, callback);
        }

        void check() throws IOException {
            if (failure != null) {
                throw new IOException("writing " + topic + "-" + partition + " to " + target + " failed: " + failure,
                                      failure);
            }
        }

        void commit() throws IOException {
            producer.flush();
            check();
            sendMap(producer, null);  // in the transaction: a failed send fails its commit
            if (figures.records > 0) {
                Map<TopicPartition, OffsetAndMetadata> next = Map.of(position(),
                    new OffsetAndMetadata(figures.lastOffset + 1, "source " + topic + "-" + partition));
                producer.sendOffsetsToTransaction(next, new ConsumerGroupMetadata(transactionalId));
            }
            producer.commitTransaction();
            done = true;
        }

        /** After commit: the producer waits for the next batch's task; otherwise it is closed. */
        void close() {
            if (producer == null) {
                return;
            }
            if (done) {
                long next = figures.records > 0 ? figures.lastOffset + 1 : committed;
                Producers.keepIdle(client(), transactionalId, new Producers.Idle(producer, next));
            } else {
                producer.close(Duration.ofSeconds(5));
            }
        }

        void abort() {
            try {
                producer.abortTransaction();
            } catch (RuntimeException ignored) {
                // fenced or broken: closing is all that is left, and a newer task aborts what this one left open
            }
        }
    }

    private TaskTransaction task() throws IOException {
        if (task == null) {
            task = new TaskTransaction(settings, client(), slot);
            TaskContext context = TaskContext.get();
            if (context != null) {
                task.enlist(TaskPlan.take(context.taskAttemptId()));
                task.readAhead();
            }
        }
        return task;
    }

    private KafkaProducer<byte[], byte[]> sharedProducer() {
        if (shared == null) {
            shared = Producers.shared(client());
        }
        return shared;
    }

    private Lane lane(UTF8String topic, int partition) throws IOException {
        if (last != null && last.partition == partition && last.topicText.equals(topic)) {
            return last;
        }
        String name = topic.toString() + "\0" + partition;
        Lane lane = lanes.get(name);
        if (lane == null) {
            lane = new Lane(topic, partition);
            lanes.put(name, lane);
        }
        last = lane;
        return lane;
    }

    @Override
    public void write(InternalRow row) throws IOException {
        SinkSettings s = settings;
        int partition = row.getInt(s.partition);
        Lane lane = lane(row.getUTF8String(s.topic), partition);
        long offset = row.getLong(s.offset);
        if (offset < lane.committed
                || s.provenance.cameFromTarget(row, s.headers)) {  // a loop: read, never written back (docs/provenance.md)
            lane.figures.skipped(offset);
            skipped++;
            return;
        }
        long now = System.currentTimeMillis();
        byte[] key = row.isNullAt(s.key) ? null : row.getBinary(s.key);
        byte[] value = row.isNullAt(s.value) ? null : row.getBinary(s.value);
        long stamp = row.isNullAt(s.timestamp) ? -1 : Math.floorDiv(row.getLong(s.timestamp), 1000L);
        RecordHeaders headers = headers(row, lane, offset, stamp);
        lane.producer.send(new ProducerRecord<>(lane.target, lane.kept ? partition : null, stamp >= 0 ? stamp : null,
                                                key, value, headers), lane);
        if (lane.map != null) {
            lane.map.sent(offset);
        }
        long size = (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        lane.figures.written(offset, size, stamp >= 0 ? stamp : now, now);
        records++;
        bytes += size;
        ageMax = Math.max(ageMax, stamp >= 0 ? now - stamp : 0);
        if (task != null && task.due(now)) {
            commitSoFar(lane);
        }
    }

    /** producer per task: flushes, sends the map segments and the positions of the lanes that wrote since the last
     * commit, and commits them (records, map and positions in one transaction); the lanes of the task so far. */
    private List<TaskTransaction.Written> writtenSinceCommit() throws IOException {
        task.producer.flush();
        List<TaskTransaction.Written> written = new ArrayList<>();
        for (Lane lane : lanes.values()) {
            lane.check();
            if (lane.figures.records > 0 && lane.figures.lastOffset + 1 > lane.positionSent) {
                written.add(new TaskTransaction.Written(lane.topic, lane.partition, lane.target, lane.kept,
                                                        lane.figures.lastOffset + 1));
                lane.positionSent = lane.figures.lastOffset + 1;
            }
        }
        for (Lane lane : lanes.values()) {
            lane.sendMap(task.producer, null);  // in the transaction: a failed send fails its commit
        }
        return written;
    }

    /** The task's transaction has been open for long (see TaskTransaction.commitEveryMs): commit, begin the next. */
    private void commitSoFar(Lane current) throws IOException {
        List<TaskTransaction.Written> written = writtenSinceCommit();
        task.commitAndBegin(written, lanes.keySet(), TaskTransaction.laneKey(current.topic, current.partition));
    }

    private RecordHeaders headers(InternalRow row, Lane lane, long offset, long stamp) {
        RecordHeaders headers = new RecordHeaders();
        if (settings.headers >= 0 && !row.isNullAt(settings.headers)) {
            ArrayData array = row.getArray(settings.headers);
            for (int i = 0; i < array.numElements(); i++) {
                InternalRow header = array.getStruct(i, 2);
                headers.add(header.isNullAt(0) ? null : header.getUTF8String(0).toString(),
                            header.isNullAt(1) ? null : header.getBinary(1));
            }
        }
        settings.provenance.addTo(headers, lane.topic, lane.partition, offset, stamp);
        return headers;
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        if (task != null) {
            task.commit(writtenSinceCommit());
        } else if (settings.exactlyOnce) {
            for (Lane lane : lanes.values()) {
                lane.commit();
            }
        } else if (shared != null) {
            shared.flush();
            for (Lane lane : lanes.values()) {
                lane.check();
            }
            writeMap();
        }
        long now = System.currentTimeMillis();
        List<Figures> figures = new ArrayList<>();
        for (Lane lane : lanes.values()) {
            lane.figures.acknowledged(now);
            figures.add(lane.figures);
        }
        return new SinkCommit(figures);
    }

    /** at_least_once: the lanes' map segments, sent once their records are acknowledged, and acknowledged in turn. */
    private void writeMap() throws IOException {
        OffsetMap.Failure failed = new OffsetMap.Failure();
        int sent = 0;
        for (Lane lane : lanes.values()) {
            sent += lane.sendMap(shared, failed);
        }
        if (sent > 0) {
            shared.flush();
            if (failed.first != null) {
                throw new IOException("writing the offset map to " + settings.offsetMapTopic + " failed: "
                                      + failed.first, failed.first);
            }
        }
    }

    @Override
    public void abort() {
        if (task != null) {
            task.abort();
        } else if (settings.exactlyOnce && !settings.producerPerTask) {
            lanes.values().forEach(Lane::abort);
        } else if (shared != null && lanes.values().stream().anyMatch(lane -> lane.failure != null)) {
            Producers.evict(client(), shared);
        }
    }

    @Override
    public void close() {
        if (task != null) {
            task.close();
        } else if (settings.exactlyOnce && !settings.producerPerTask) {
            lanes.values().forEach(Lane::close);
        }
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        return SinkMetrics.values(records, bytes, skipped, ageMax);
    }
}
