package securemirror.source;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;

/**
 * Compiled with jvm/sink's source (tests/unit/test_continuous_source.py). Argument: a seed. Prints lines the test
 * judges:
 * <ul>
 * <li>{@code positions STEP json}: a continuous reader's positions at a record of each step of one poll, after a Java
 *     serialization round trip (as Spark sends them to the driver), and {@code merged json} of two slots';</li>
 * <li>{@code expected STEP json}: the same computed plainly, by walking the poll record by record;</li>
 * <li>{@code slices TASKS slot:count ...} for the continuous plan of 1,000 partitions over 3 tasks, and
 *     {@code pattern MATCHES...}: whether the pattern of the {@code subscribe} list {@code a.b, c$d} matches
 *     {@code a.b}, {@code c$d}, {@code axb}, {@code a.b,c$d}, {@code cd} and {@code " a.b"};</li>
 * <li>{@code unanswered ANSWER MS}: what {@link MirrorContinuousStream#needsReconfiguration} answered, and in how many
 *     ms, for a source whose port refuses every connection while the stream may ride through for 10 minutes.</li>
 * </ul>
 */
public final class ContinuousCheck {
    public static void main(String[] args) throws Exception {
        Random random = new Random(Long.parseLong(args[0]));
        TopicPartition[] partitions = new TopicPartition[5];
        long[] before = new long[5];
        for (int i = 0; i < 5; i++) {
            partitions[i] = new TopicPartition("t", i);
            before[i] = 10 + random.nextInt(100);
        }
        int[] order = {3, 0, 4};  // the poll returned records of partitions 3, 0 and 4, in that order
        SlotPositions.Poll poll = new SlotPositions.Poll(partitions, before.clone(), order.length);
        long[] walking = before.clone();
        SlotPositions last = null;
        for (int step = 0; step < order.length; step++) {
            poll.order[step] = order[step];
            int records = 1 + random.nextInt(4);
            for (int r = 0; r < records; r++) {
                walking[order[step]] += 1 + random.nextInt(3);  // gaps: markers, compacted offsets
                last = new SlotPositions(poll, step, walking[order[step]]);
                if (r == 0) {
                    System.out.println("expected " + step + " " + json(partitions, walking));
                    System.out.println("positions " + step + " " + json(roundTrip(last).positions()));
                }
            }
            poll.ends[step] = walking[order[step]];
        }
        System.out.println("expected last " + json(partitions, walking));
        System.out.println("positions last " + json(roundTrip(last).positions()));
        SlotPositions start = new SlotPositions(new SlotPositions.Poll(new TopicPartition[] {
            new TopicPartition("u", 0)}, new long[] {7}, 0), -1, 0);
        Map<TopicPartition, Long> merged = new HashMap<>(roundTrip(last).positions());
        merged.putAll(roundTrip(start).positions());
        System.out.println("merged " + json(merged));
        Map<TopicPartition, Long> from = new HashMap<>();
        for (int p = 0; p < 1000; p++) {
            from.put(new TopicPartition(p % 2 == 0 ? "orders" : "audit", p / 2), (long) p);
        }
        Slice[] slices = MirrorContinuousStream.slices(from, 3);
        StringBuilder line = new StringBuilder("slices " + slices.length);
        for (Slice slice : slices) {
            boolean unbounded = slice.ranges().stream().allMatch(range -> range.until() == Long.MAX_VALUE
                && from.get(new TopicPartition(range.topic(), range.partition())) == range.from());
            line.append(' ').append(slice.slot()).append(':').append(slice.ranges().size()).append(':')
                .append(slice.partitions()).append(':').append(unbounded);
        }
        System.out.println(line);
        java.util.regex.Pattern listed = java.util.regex.Pattern.compile(SourceSettings.pattern(null, "a.b, c$d"));
        StringBuilder matches = new StringBuilder("pattern");
        for (String name : new String[] {"a.b", "c$d", "axb", "a.b,c$d", "cd", " a.b"}) {
            matches.append(' ').append(listed.matcher(name).matches());
        }
        System.out.println(matches);
        int refused;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            refused = socket.getLocalPort();  // closed below: nothing listens there
        }
        MirrorContinuousStream stream = new MirrorContinuousStream(SourceSettings.of(Map.of(
            "kafka.bootstrap.servers", "127.0.0.1:" + refused, "subscribePattern", "t",
            SourceSettings.TASKS, "2", SourceSettings.RIDE_THROUGH_MS, "600000")), "/nonexistent");
        long began = System.nanoTime();
        boolean answer = stream.needsReconfiguration();
        System.out.println("unanswered " + answer + " " + (System.nanoTime() - began) / 1_000_000);
    }

    private static SlotPositions roundTrip(SlotPositions positions) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(positions);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (SlotPositions) in.readObject();
        }
    }

    private static String json(TopicPartition[] partitions, long[] at) {
        Map<TopicPartition, Long> map = new HashMap<>();
        for (int i = 0; i < partitions.length; i++) {
            map.put(partitions[i], at[i]);
        }
        return json(map);
    }

    private static String json(Map<TopicPartition, Long> map) {
        return new PartitionOffsets(map).json();  // its JSON orders topics and partitions
    }
}
