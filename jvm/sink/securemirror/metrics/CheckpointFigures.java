package securemirror.metrics;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * One consumer group's checkpoint figures for one target topic-partition, under MirrorMaker 2's attribute names
 * ({@code MirrorCheckpointMetrics}), fed with each checkpoint the group sync wrote for it (the metrics file's
 * {@code checkpoints} lines, read by the job's driver).
 *
 * <p>As MirrorMaker 2's: {@code checkpoint-latency-ms} is the latest checkpoint's latency (a Kafka {@code Value});
 * its {@code -min}, {@code -max} and {@code -avg} are over the checkpoints of the last 60 s, each one counted once
 * (Kafka's Min, Max and Avg over two 30 s samples), NaN when there were none. A checkpoint is placed in the window at
 * the time the sync wrote it (the line's {@code time}), not when the driver read it.
 */
final class CheckpointFigures implements Figures {
    static final String LATENCY = "checkpoint-latency-ms";
    /** MirrorMaker 2's attributes of a {@code MirrorCheckpointConnector} group's topic-partition, in its order. */
    static final List<String> ATTRIBUTES = List.of(LATENCY, LATENCY + "-max", LATENCY + "-min", LATENCY + "-avg");

    private record Sample(long time, double latency) {
    }

    private final Deque<Sample> window = new ArrayDeque<>();
    private double latest = Double.NaN;

    /** One checkpoint's latency, written at {@code time} (ms since the epoch). */
    synchronized void add(long time, double latency) {
        latest = latency;
        window.addLast(new Sample(time, latency));
    }

    @Override
    public List<String> attributes() {
        return ATTRIBUTES;
    }

    @Override
    public synchronized double value(String attribute, long now) {
        window.removeIf(sample -> sample.time() <= now - PartitionFigures.WINDOW_MS);
        if (attribute.equals(LATENCY)) {
            return latest;
        }
        if (!ATTRIBUTES.contains(attribute)) {
            throw new IllegalArgumentException("no such attribute: " + attribute);
        }
        if (window.isEmpty()) {
            return Double.NaN;
        }
        return switch (attribute.substring(LATENCY.length() + 1)) {
            case "min" -> window.stream().mapToDouble(Sample::latency).min().orElse(Double.NaN);
            case "max" -> window.stream().mapToDouble(Sample::latency).max().orElse(Double.NaN);
            default -> window.stream().mapToDouble(Sample::latency).average().orElse(Double.NaN);
        };
    }
}
