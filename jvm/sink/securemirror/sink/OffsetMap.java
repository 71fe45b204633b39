package securemirror.sink;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The source-to-target offset map (docs/offset-map.md; the format is secure_mirror/run/groups/offset_map.py's), for
 * one lane of one write: a source partition whose partition is kept. The task's thread notes each source offset it
 * sends, as runs of contiguous offsets; the producer's thread notes each acknowledged target offset, as runs too
 * (Kafka runs the callbacks of one partition in the order of the sends, so the n-th acknowledgement is the n-th
 * send's). After the flush the two are zipped into segments: a new one wherever either side is not contiguous. In
 * steady state that is one segment, so one map record, per lane and write; nothing is kept per record.
 */
final class OffsetMap {
    static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Runs sources = new Runs();
    private final Runs targets = new Runs();  // guarded by itself: written by the producer's thread
    private boolean unknown;  // guarded by targets: an acknowledgement without an offset (acks=0)

    /** The task's thread sent the record of this source offset. */
    void sent(long source) {
        sources.add(source);
    }

    /** The producer's thread: the target acknowledged the lane's next record at this offset (-1: unknown). */
    void acknowledged(long target) {
        synchronized (targets) {
            if (target < 0) {
                unknown = true;
            } else {
                targets.add(target);
            }
        }
    }

    /**
     * The lane's segments, {@code {source, target, count}} each, once every send is acknowledged (after a flush
     * without a failure); none when the acknowledgements cannot be matched to the sends (offsets unknown).
     */
    List<long[]> segments() {
        synchronized (targets) {
            if (unknown || targets.total != sources.total) {
                return List.of();
            }
            return zip(sources, targets);
        }
    }

    /** Cuts two run lists of the same length into segments: a boundary of either is a boundary of the result. */
    static List<long[]> zip(Runs sources, Runs targets) {
        List<long[]> segments = new ArrayList<>();
        int i = 0, j = 0;
        long usedSource = 0, usedTarget = 0;  // records already taken from run i of sources, run j of targets
        while (i < sources.size && j < targets.size) {
            long count = Math.min(sources.counts[i] - usedSource, targets.counts[j] - usedTarget);
            segments.add(new long[] {sources.starts[i] + usedSource, targets.starts[j] + usedTarget, count});
            usedSource += count;
            usedTarget += count;
            if (usedSource == sources.counts[i]) {
                i++;
                usedSource = 0;
            }
            if (usedTarget == targets.counts[j]) {
                j++;
                usedTarget = 0;
            }
        }
        return segments;
    }

    /** Offsets in the order noted, as runs of contiguous ones. */
    static final class Runs {
        long[] starts = new long[2];
        long[] counts = new long[2];
        int size;
        long total;

        void clear() {
            size = 0;
            total = 0;
        }

        void add(long offset) {
            total++;
            if (size > 0 && starts[size - 1] + counts[size - 1] == offset) {
                counts[size - 1]++;
                return;
            }
            if (size == starts.length) {
                starts = Arrays.copyOf(starts, size * 2);
                counts = Arrays.copyOf(counts, size * 2);
            }
            starts[size] = offset;
            counts[size] = 1;
            size++;
        }
    }

    /** One map record: key {@code ["<source topic>",<partition>]}, value {@code {"v":1,"target_topic":...}}. */
    static ProducerRecord<byte[], byte[]> record(String mapTopic, String topic, int partition, String target,
                                                 long[] segment) {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("v", VERSION);
        value.put("target_topic", target);
        value.put("source", segment[0]);
        value.put("target", segment[1]);
        value.put("count", segment[2]);
        try {
            return new ProducerRecord<>(mapTopic, JSON.writeValueAsBytes(List.of(topic, partition)),
                                        JSON.writeValueAsBytes(value));
        } catch (JsonProcessingException error) {
            throw new IllegalStateException(error);
        }
    }

    /**
     * Sends a lane's segments to the map topic (no wait: exactly_once commits them with its transaction, at_least_once
     * flushes after all lanes), and forgets them. Returns how many.
     */
    int send(KafkaProducer<byte[], byte[]> producer, String mapTopic, String topic, int partition, String target,
             Callback callback) {
        List<long[]> segments;
        synchronized (targets) {  // what is sent is forgotten: a transaction committed mid-task sends the rest later
            segments = segments();
            sources.clear();
            targets.clear();
            unknown = false;
        }
        for (long[] segment : segments) {
            producer.send(record(mapTopic, topic, partition, target, segment), callback);
        }
        return segments.size();
    }

    /** Notes the first failure of map sends (at_least_once checks it after its flush). */
    static final class Failure implements Callback {
        volatile Exception first;

        @Override
        public void onCompletion(RecordMetadata metadata, Exception exception) {
            if (exception != null && first == null) {
                first = exception;
            }
        }
    }
}
