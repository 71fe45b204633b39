package securemirror.sink;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * One source topic-partition's figures in one write: records and key+value bytes written, offsets, the records'
 * age when the sink took them (now minus the source timestamp) and their replication latency (from the source
 * timestamp to the moment the target acknowledged the write, i.e. the end of the task's flush). Times in ms.
 * Records skipped because the target already holds them (exactly_once after a replay) are counted apart.
 */
public final class Figures implements Serializable {
    private static final long serialVersionUID = 1L;
    final String topic;
    final int partition;
    final String targetTopic;
    final boolean kept;
    long records, bytes, skipped;
    long firstOffset = -1, lastOffset = -1;
    long ageMin = Long.MAX_VALUE, ageMax = Long.MIN_VALUE, ageSum;
    long stampMin = Long.MAX_VALUE, stampMax = Long.MIN_VALUE, stampSum;
    long latencyMin, latencyMax, latencySum;

    Figures(String topic, int partition, String targetTopic, boolean kept) {
        this.topic = topic;
        this.partition = partition;
        this.targetTopic = targetTopic;
        this.kept = kept;
    }

    void written(long offset, long size, long stamp, long now) {
        if (firstOffset < 0) {
            firstOffset = offset;
        }
        lastOffset = offset;
        records++;
        bytes += size;
        long age = now - stamp;
        ageMin = Math.min(ageMin, age);
        ageMax = Math.max(ageMax, age);
        ageSum += age;
        stampMin = Math.min(stampMin, stamp);
        stampMax = Math.max(stampMax, stamp);
        stampSum += stamp;
    }

    void skipped(long offset) {
        skipped++;
        lastOffset = Math.max(lastOffset, offset);
    }

    /** Every written record is acknowledged at {@code now}. */
    void acknowledged(long now) {
        if (records > 0) {
            latencyMin = now - stampMax;
            latencyMax = now - stampMin;
            latencySum = records * now - stampSum;
        }
    }

    void add(Figures other) {
        if (other.records > 0) {
            firstOffset = firstOffset < 0 ? other.firstOffset : Math.min(firstOffset, other.firstOffset);
            ageMin = Math.min(ageMin, other.ageMin);
            ageMax = Math.max(ageMax, other.ageMax);
            latencyMin = records > 0 ? Math.min(latencyMin, other.latencyMin) : other.latencyMin;
            latencyMax = records > 0 ? Math.max(latencyMax, other.latencyMax) : other.latencyMax;
        }
        lastOffset = Math.max(lastOffset, other.lastOffset);
        records += other.records;
        bytes += other.bytes;
        skipped += other.skipped;
        ageSum += other.ageSum;
        latencySum += other.latencySum;
    }

    /** MirrorMaker 2's names where they apply. */
    Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("topic", topic);
        map.put("partition", partition);
        map.put("target-topic", targetTopic);
        map.put("partition-kept", kept);
        map.put("record-count", records);
        map.put("byte-count", bytes);
        map.put("skipped-count", skipped);
        map.put("first-offset", firstOffset);
        map.put("last-offset", lastOffset);
        if (records > 0) {
            map.put("record-age-ms-min", ageMin);
            map.put("record-age-ms-avg", Math.round((double) ageSum / records));
            map.put("record-age-ms-max", ageMax);
            map.put("replication-latency-ms-min", latencyMin);
            map.put("replication-latency-ms-avg", Math.round((double) latencySum / records));
            map.put("replication-latency-ms-max", latencyMax);
        }
        return map;
    }

    /** The figures of a whole write, per source topic-partition. */
    static Map<String, Figures> merge(Iterable<Figures> parts) {
        Map<String, Figures> merged = new TreeMap<>();
        for (Figures part : parts) {
            Figures into = merged.computeIfAbsent(part.topic + "\0" + String.format("%010d", part.partition),
                name -> new Figures(part.topic, part.partition, part.targetTopic, part.kept));
            into.add(part);
        }
        return merged;
    }

    /** A write's figures as text: {@code {"partitions": [{...}, ...]}} (JSON). */
    static String toJson(Map<String, Figures> merged) {
        List<Map<String, Object>> rows = new ArrayList<>();
        merged.values().forEach(figures -> rows.add(figures.toMap()));
        try {
            return new ObjectMapper().writeValueAsString(Map.of("partitions", rows));
        } catch (JsonProcessingException error) {
            throw new IllegalStateException(error);
        }
    }
}
