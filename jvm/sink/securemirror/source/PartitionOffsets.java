package securemirror.source;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * The source's position: the next offset of every topic-partition it reads, in the JSON form of Spark's Kafka source
 * ({@code {"topic":{"0":42,"1":7}}}, topics and partitions in order), so the checkpoint's offset log, the query's
 * progress and the tools that read them ({@code secure-mirror lag}, {@code verify}) read both sources alike.
 */
public final class PartitionOffsets extends Offset {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Map<TopicPartition, Long> offsets;

    PartitionOffsets(Map<TopicPartition, Long> offsets) {
        this.offsets = Collections.unmodifiableMap(offsets);
    }

    Map<TopicPartition, Long> offsets() {
        return offsets;
    }

    /** An offset Spark hands back: ours, or read from the checkpoint's offset log (a {@code SerializedOffset}). */
    static PartitionOffsets of(Offset offset) {
        return offset instanceof PartitionOffsets ours ? ours : parse(offset.json());
    }

    static PartitionOffsets parse(String json) {
        Map<String, Map<String, Long>> data;
        try {
            data = JSON.readValue(json, new TypeReference<Map<String, Map<String, Long>>>() { });
        } catch (java.io.IOException error) {
            throw new IllegalArgumentException("not a mirror source offset: " + error.getMessage());
        }
        Map<TopicPartition, Long> offsets = new java.util.HashMap<>();
        data.forEach((topic, parts) -> parts.forEach((partition, offset) ->
            offsets.put(new TopicPartition(topic, Integer.parseInt(partition)), offset)));
        return new PartitionOffsets(offsets);
    }

    @Override
    public String json() {
        Map<String, Map<Integer, Long>> sorted = new TreeMap<>();
        offsets.forEach((tp, offset) -> sorted.computeIfAbsent(tp.topic(), t -> new TreeMap<>()).put(tp.partition(),
                                                                                                      offset));
        try {
            return JSON.writeValueAsString(sorted);
        } catch (com.fasterxml.jackson.core.JsonProcessingException error) {
            throw new IllegalStateException(error);
        }
    }
}
