package securemirror.source;

import java.util.HashMap;
import java.util.Map;

/** Pure arithmetic of the source's planning: a batch's share per partition, and how far behind the query is. */
final class Limits {
    private Limits() {
    }

    /**
     * The ends of a batch that reads at most {@code max} records: each partition gets a share of {@code max} in
     * proportion to its backlog (as Spark's Kafka source does), at least one record where it has any, so every
     * partition moves in every batch.
     */
    static Map<org.apache.kafka.common.TopicPartition, Long> capped(Map<org.apache.kafka.common.TopicPartition, Long> from,
                                                                  Map<org.apache.kafka.common.TopicPartition, Long> end,
                                                                  long max) {
        long total = 0;
        for (var entry : end.entrySet()) {
            total += Math.max(0, entry.getValue() - from.getOrDefault(entry.getKey(), entry.getValue()));
        }
        Map<org.apache.kafka.common.TopicPartition, Long> capped = new HashMap<>(end);
        if (total <= max) {
            return capped;
        }
        for (var entry : end.entrySet()) {
            long first = from.getOrDefault(entry.getKey(), entry.getValue());
            long backlog = entry.getValue() - first;
            if (backlog > 0) {
                long share = Math.max(1, (long) Math.floor((double) backlog * max / total));
                capped.put(entry.getKey(), first + Math.min(backlog, share));
            }
        }
        return capped;
    }

    /** Spark's Kafka source's lag figures: offsets behind the latest, min/max/avg over partitions. */
    static Map<String, String> behind(Map<org.apache.kafka.common.TopicPartition, Long> consumed,
                                      Map<org.apache.kafka.common.TopicPartition, Long> latest) {
        if (consumed.isEmpty() || latest.isEmpty()) {
            return Map.of();
        }
        long min = Long.MAX_VALUE, max = 0, sum = 0;
        int count = 0;
        for (var entry : latest.entrySet()) {
            Long at = consumed.get(entry.getKey());
            long behind = at == null ? 0 : Math.max(0, entry.getValue() - at);
            min = Math.min(min, behind);
            max = Math.max(max, behind);
            sum += behind;
            count++;
        }
        return Map.of("minOffsetsBehindLatest", Long.toString(min), "maxOffsetsBehindLatest", Long.toString(max),
                      "avgOffsetsBehindLatest", Double.toString((double) sum / count));
    }
}
