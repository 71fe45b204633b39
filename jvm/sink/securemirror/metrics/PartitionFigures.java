package securemirror.metrics;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * One mirrored topic-partition's figures under MirrorMaker 2's attribute names, fed once per batch (or epoch) with
 * what the mirror's sink reported for it, read by the gauges and MBeans at any time.
 *
 * <p>As MirrorMaker 2's ({@code MirrorSourceMetrics}, on Kafka's metrics): {@code record-count} and
 * {@code byte-count} are totals since the job started; {@code record-rate} and {@code byte-rate} are per second over
 * the last 60 s (the span counted at least 30 s, as Kafka's rate over two 30 s samples does), so they fall to 0 when
 * the mirror idles; the {@code -min}, {@code -max} and {@code -avg} of {@code record-age-ms} and
 * {@code replication-latency-ms} are over the batches of the last 60 s (NaN when there were none, as Kafka's are),
 * the average weighted by records; the plain {@code record-age-ms} and {@code replication-latency-ms} keep the latest
 * batch's average (MirrorMaker 2 keeps its latest record's value). A batch gives its minimum, maximum and average,
 * not each record's, so those are combined, not recomputed per record.
 */
final class PartitionFigures implements Figures {
    static final long WINDOW_MS = 60_000;
    static final long SHORTEST_SPAN_MS = 30_000;
    static final String AGE = "record-age-ms";
    static final String LATENCY = "replication-latency-ms";
    /** MirrorMaker 2's attributes of a {@code MirrorSourceConnector} topic-partition, in its order. */
    static final List<String> ATTRIBUTES = List.of(
        "record-count", "record-rate", AGE, AGE + "-max", AGE + "-min", AGE + "-avg",
        "byte-count", "byte-rate", LATENCY, LATENCY + "-max", LATENCY + "-min", LATENCY + "-avg");

    /** A batch's minimum, average and maximum of one figure; NaN throughout when the sink gave none. */
    record Spread(double min, double avg, double max) {
        static final Spread NONE = new Spread(Double.NaN, Double.NaN, Double.NaN);

        boolean known() {
            return !Double.isNaN(avg);
        }
    }

    /** One batch's share of this partition. */
    private record Sample(long time, long records, long bytes, Spread age, Spread latency) {
    }

    private final Deque<Sample> window = new ArrayDeque<>();
    private final long since;
    private double records, bytes;
    private double age = Double.NaN, latency = Double.NaN;

    PartitionFigures(long now) {
        this.since = now;
    }

    synchronized void add(long now, long batchRecords, long batchBytes, Spread batchAge, Spread batchLatency) {
        records += batchRecords;
        bytes += batchBytes;
        if (batchAge.known()) {
            age = batchAge.avg();
        }
        if (batchLatency.known()) {
            latency = batchLatency.avg();
        }
        window.addLast(new Sample(now, batchRecords, batchBytes, batchAge, batchLatency));
        forget(now);
    }

    @Override
    public List<String> attributes() {
        return ATTRIBUTES;
    }

    /** The attribute's value now (one of {@link #ATTRIBUTES}). */
    @Override
    public synchronized double value(String attribute, long now) {
        forget(now);
        return switch (attribute) {
            case "record-count" -> records;
            case "byte-count" -> bytes;
            case "record-rate" -> perSecond(window.stream().mapToLong(Sample::records).sum(), now);
            case "byte-rate" -> perSecond(window.stream().mapToLong(Sample::bytes).sum(), now);
            case AGE -> age;
            case LATENCY -> latency;
            default -> spread(attribute);
        };
    }

    private double spread(String attribute) {
        boolean isAge = attribute.startsWith(AGE + "-");
        if (!isAge && !attribute.startsWith(LATENCY + "-")) {
            throw new IllegalArgumentException("no such attribute: " + attribute);
        }
        String which = attribute.substring(attribute.lastIndexOf('-') + 1);
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY, sum = 0, weight = 0;
        for (Sample sample : window) {
            Spread spread = isAge ? sample.age() : sample.latency();
            if (spread.known()) {
                min = Math.min(min, spread.min());
                max = Math.max(max, spread.max());
                sum += spread.avg() * Math.max(sample.records(), 1);
                weight += Math.max(sample.records(), 1);
            }
        }
        if (weight == 0) {
            return Double.NaN;
        }
        return switch (which) {
            case "min" -> min;
            case "max" -> max;
            default -> sum / weight;
        };
    }

    private double perSecond(long total, long now) {
        long span = Math.min(WINDOW_MS, Math.max(SHORTEST_SPAN_MS, now - since));
        return total * 1000.0 / span;
    }

    private void forget(long now) {
        while (!window.isEmpty() && window.peekFirst().time() <= now - WINDOW_MS) {
            window.removeFirst();
        }
    }
}
