package securemirror.sink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One task's writer. Each source partition in the task's rows is a {@link Lane}: its target topic and partition
 * rule, its figures and its offset map segments. The task's {@link Delivery} (chosen once from the sink's options:
 * a shared producer, a transaction per source partition or one per task) opens each lane with the producer it sends
 * through and the next source offset the target already holds; the writer skips rows before it and rows that came
 * from the target (a loop), sends the others with their headers and provenance, and keeps the figures. At the end
 * the delivery commits, aborts and closes: see its three classes for how each makes the records visible, once.
 * <p>
 * With an offset map topic ({@link SinkSettings#offsetMapTopic}), each lane whose partition is kept also notes which
 * source offsets it wrote at which target offsets ({@link OffsetMap}); once the write's records are acknowledged, its
 * segments go to the map topic: into the transaction before its commit with exactly_once, so map and records commit
 * or abort together; sent and flushed before the task reports its commit otherwise.
 */
final class MirrorDataWriter implements DataWriter<InternalRow> {
    private static final int KEYS_KEPT = 1024;
    private final SinkSettings settings;
    private final Map<String, Lane> lanes = new HashMap<>();
    private final Map<UTF8String, String> keys = new HashMap<>();
    private final Delivery delivery;
    private Lane last;
    /** The task's totals over its lanes, kept as rows go by: Spark asks for them every 100 rows. */
    private long records, bytes, skipped, ageMax;

    MirrorDataWriter(SinkSettings settings, int slot) {
        this.settings = settings;
        this.delivery = Delivery.of(settings, slot, Collections.unmodifiableMap(lanes));
    }

    private Lane lane(UTF8String topic, int partition) throws IOException {
        if (last != null && last.partition == partition && last.topicText.equals(topic)) {
            return last;
        }
        String name = Lane.key(topic.toString(), partition);
        Lane lane = lanes.get(name);
        if (lane == null) {
            lane = new Lane(settings, topic, partition);
            delivery.open(lane);
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
        RecordHeaders headers = offset < lane.committed ? null : ownHeaders(row);
        if (headers == null) {  // written before, or a loop: read, never written back (docs/provenance.md)
            lane.figures.skipped(offset);
            skipped++;
            return;
        }
        long now = System.currentTimeMillis();
        byte[] key = row.isNullAt(s.key) ? null : row.getBinary(s.key);
        byte[] value = row.isNullAt(s.value) ? null : row.getBinary(s.value);
        long stamp = row.isNullAt(s.timestamp) ? -1 : Math.floorDiv(row.getLong(s.timestamp), 1000L);
        s.provenance.addTo(headers, lane.topic, lane.partition, offset, stamp);
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
        delivery.sent(lane, now);
    }

    /**
     * The row's own headers, to send with its record; null when one of them says the record came from the target (the
     * loop filter, {@link Provenance#namesTarget}). A header's key is text in the row and a string in Kafka's record:
     * the few keys a topic repeats are each decoded once ({@value #KEYS_KEPT} at most, then each time).
     */
    private RecordHeaders ownHeaders(InternalRow row) {
        RecordHeaders headers = new RecordHeaders();
        int column = settings.headers;
        if (column < 0 || row.isNullAt(column)) {
            return headers;
        }
        ArrayData array = row.getArray(column);
        for (int i = 0; i < array.numElements(); i++) {
            InternalRow header = array.getStruct(i, 2);
            UTF8String key = header.isNullAt(0) ? null : header.getUTF8String(0);
            byte[] value = header.isNullAt(1) ? null : header.getBinary(1);
            if (settings.provenance.namesTarget(key, value)) {
                return null;
            }
            headers.add(key == null ? null : keyText(key), value);
        }
        return headers;
    }

    private String keyText(UTF8String key) {
        String known = keys.get(key);
        if (known == null) {
            known = key.toString();
            if (keys.size() < KEYS_KEPT) {
                keys.put(key.copy(), known);  // the row's text points into the row, which Spark reuses
            }
        }
        return known;
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        delivery.commit();
        long now = System.currentTimeMillis();
        List<Figures> figures = new ArrayList<>();
        for (Lane lane : lanes.values()) {
            lane.figures.acknowledged(now);
            figures.add(lane.figures);
        }
        return new SinkCommit(figures);
    }

    @Override
    public void abort() {
        delivery.abort();
    }

    @Override
    public void close() {
        delivery.close();
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        return SinkMetrics.values(records, bytes, skipped, ageMax);
    }
}
