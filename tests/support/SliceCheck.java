package securemirror.source;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;

/**
 * Compiled with jvm/sink's source (tests/unit/test_source_slices.py). Arguments: a seed, the number of tasks, then
 * {@code topic:partitions} for each topic. Plans two batches over those partitions with MirrorStream.slices: one
 * where every partition has records, one where each has records with probability one half (seeded); prints, one line
 * a slot, {@code slot rangesOfTheFirst rangesOfTheSecond partitionsOfTheFirst partitionsOfTheSecond}.
 */
public final class SliceCheck {
    public static void main(String[] args) {
        Random random = new Random(Long.parseLong(args[0]));
        int tasks = Integer.parseInt(args[1]);
        Map<TopicPartition, Long> from = new HashMap<>();
        Map<TopicPartition, Long> full = new HashMap<>();
        Map<TopicPartition, Long> sparse = new HashMap<>();
        for (int i = 2; i < args.length; i++) {
            String[] topic = args[i].split(":", 2);
            for (int partition = 0; partition < Integer.parseInt(topic[1]); partition++) {
                TopicPartition tp = new TopicPartition(topic[0], partition);
                from.put(tp, 100L);
                full.put(tp, 110L);
                sparse.put(tp, random.nextBoolean() ? 105L : 100L);
            }
        }
        Slice[] first = MirrorStream.slices(from, full, tasks);
        Slice[] second = MirrorStream.slices(from, sparse, tasks);
        for (int slot = 0; slot < tasks; slot++) {
            System.out.println(first[slot].slot() + " " + first[slot].ranges().size() + " "
                + second[slot].ranges().size() + " " + first[slot].partitions() + " " + second[slot].partitions());
        }
    }
}
