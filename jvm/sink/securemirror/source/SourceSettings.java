package securemirror.source;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.spark.SparkEnv;

import securemirror.sink.AdminSettings;
import securemirror.sink.TokenLogin;

/**
 * What the mirror's source is told, from the read's options (the names of Spark's Kafka source where they mean the
 * same):
 * <ul>
 * <li>{@code kafka.*}: the source consumer's settings, identity included;</li>
 * <li>{@code subscribePattern}: a Java regex; the source reads every topic it matches whole (as
 *     {@code KafkaConsumer.subscribe(Pattern)}), internal topics never; or {@code subscribe}, a comma-separated list
 *     of topics (the continuous job's);</li>
 * <li>{@code startingOffsets}: {@code earliest} or {@code latest}, for the partitions of the first batch; partitions
 *     and topics that appear later are read from their earliest offset;</li>
 * <li>{@code failOnDataLoss}: {@code true} (default) fails the query when records the batch needs are gone;</li>
 * <li>{@code includeHeaders}, {@code maxOffsetsPerTrigger};</li>
 * <li>{@value #TASKS}: the tasks of each micro-batch (default: Spark's default parallelism); each task reads its
 *     share of the partitions with one consumer, and a partition always goes to the same task;</li>
 * <li>{@value #TOKEN_CLUSTER} and {@value #TOKEN_MECHANISM}: when set, executors log in with the Kafka delegation
 *     token Spark obtained for that cluster id, as the sink does ({@link TokenLogin});</li>
 * <li>{@value #RIDE_THROUGH_MS}: how long the driver asks the source again through transient failures (a broker or
 *     the whole cluster away, a timeout) before the query fails ({@code mirror.ride_through_seconds}).</li>
 * </ul>
 * No setting is ever printed: {@link #toString()} names none.
 */
public final class SourceSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String TASKS = "mirror.tasks";
    public static final String TOKEN_CLUSTER = "mirror.token-cluster";
    public static final String TOKEN_MECHANISM = "mirror.token-mechanism";
    public static final String RIDE_THROUGH_MS = "mirror.ride-through-ms";
    public static final String FETCH_AHEAD = "spark.securemirror.source.fetchAhead";
    static final long DEFAULT_RIDE_THROUGH_MS = 1_800_000;
    static final long DEFAULT_POLL_TIMEOUT_MS = 120_000;
    static final String PER_PARTITION = "max.partition.fetch.bytes";
    static final long KAFKA_PER_PARTITION = 1024 * 1024;  // Kafka's default max.partition.fetch.bytes
    static final long KAFKA_FETCH_MAX = 50 * 1024 * 1024;  // and fetch.max.bytes
    static final long MOST_PER_PARTITION = 16 * 1024 * 1024;

    final HashMap<String, Object> consumer = new HashMap<>();
    final String pattern;
    final boolean latest;
    final boolean failOnDataLoss;
    final boolean includeHeaders;
    final long maxOffsetsPerTrigger;
    final int tasks;
    final long pollTimeoutMs;
    final String tokenCluster;
    final String tokenMechanism;
    final long rideThroughMs;

    private SourceSettings(Map<String, String> options) {
        options.forEach((name, text) -> {
            if (name.startsWith("kafka.")) {
                consumer.put(name.substring("kafka.".length()), text);
            }
        });
        // the reader's own: positions are the checkpoint's, never a group's; a missing offset is an error to judge
        consumer.put("enable.auto.commit", "false");
        consumer.put("auto.offset.reset", "none");
        consumer.remove("group.id");
        pattern = pattern(options.get("subscribePattern"), options.get("subscribe"));
        Pattern.compile(pattern);  // a bad regex fails the query's start, not a batch
        String starting = options.getOrDefault("startingOffsets", "earliest");
        if (!starting.equals("earliest") && !starting.equals("latest")) {
            throw new IllegalArgumentException("the mirror source's startingOffsets is earliest or latest");
        }
        latest = starting.equals("latest");
        failOnDataLoss = !"false".equalsIgnoreCase(options.getOrDefault("failOnDataLoss", "true"));
        includeHeaders = "true".equalsIgnoreCase(options.getOrDefault("includeHeaders", "false"));
        maxOffsetsPerTrigger = Long.parseLong(options.getOrDefault("maxOffsetsPerTrigger", "0"));
        tasks = Integer.parseInt(options.getOrDefault(TASKS, "0"));
        pollTimeoutMs = Long.parseLong(options.getOrDefault("kafkaConsumer.pollTimeoutMs",
                                                           Long.toString(DEFAULT_POLL_TIMEOUT_MS)));
        tokenCluster = options.get(TOKEN_CLUSTER);
        tokenMechanism = options.getOrDefault(TOKEN_MECHANISM, "SCRAM-SHA-512");
        rideThroughMs = Long.parseLong(options.getOrDefault(RIDE_THROUGH_MS, Long.toString(DEFAULT_RIDE_THROUGH_MS)));
    }

    /** The topics read, as a Java regex: the pattern, or the listed topics each matched exactly. */
    static String pattern(String pattern, String listed) {
        if (pattern != null && !pattern.isEmpty() && listed == null) {
            return pattern;
        }
        if (listed != null && !listed.isBlank() && pattern == null) {
            return java.util.Arrays.stream(listed.split(",")).map(String::trim).filter(t -> !t.isEmpty())
                .map(Pattern::quote).collect(java.util.stream.Collectors.joining("|"));
        }
        throw new IllegalArgumentException("the mirror source needs one of subscribePattern or subscribe");
    }

    public static SourceSettings of(Map<String, String> options) {
        return new SourceSettings(options);
    }

    boolean readCommitted() {
        return !"read_uncommitted".equals(consumer.get("isolation.level"));
    }

    /**
     * The driver's admin client settings: the consumer's connection and identity (the driver logs in itself), config
     * providers included.
     */
    Map<String, Object> adminSettings() {
        return AdminSettings.of(consumer);
    }

    /**
     * The consumer settings of a task whose slot holds {@code partitions} partitions ({@link Slice#partitions}: with
     * records in its batch or not), logged in with the current delegation token if asked. Unless the profile sets
     * {@code max.partition.fetch.bytes}, each partition's share of a fetch is sized so that the slot's partitions
     * together can fill one response of {@code fetch.max.bytes}: that over the
     * partitions, between Kafka's default of 1 MiB and {@value #MOST_PER_PARTITION} bytes. From about 50 partitions
     * a task on (with Kafka's 50 MiB responses) that is Kafka's default; below, a task of few partitions fetches more
     * records a round trip, as a plain copying loop tuned for them does (benchmarks/NOTES.md section 19).
     */
    Map<String, Object> consumerSettings(int partitions) {
        Map<String, Object> sized = consumer;
        if (!consumer.containsKey(PER_PARTITION)) {
            long share = responseBytes() / Math.max(1, partitions);
            sized = new HashMap<>(consumer);
            sized.put(PER_PARTITION, Long.toString(Math.max(KAFKA_PER_PARTITION, Math.min(MOST_PER_PARTITION, share))));
        }
        return tokenCluster == null ? sized : TokenLogin.apply(sized, tokenCluster, tokenMechanism);
    }

    /** How many partitions' full shares one response of a consumer with settings {@code client} carries. */
    int wholeInResponse(Map<String, Object> client) {
        long share = Long.parseLong(String.valueOf(client.getOrDefault(PER_PARTITION, KAFKA_PER_PARTITION)));
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1, responseBytes() / Math.max(1, share)));
    }

    /** The most one fetch response holds: the profile's {@code fetch.max.bytes}, or Kafka's default. */
    long responseBytes() {
        return Long.parseLong(String.valueOf(consumer.getOrDefault("fetch.max.bytes", KAFKA_FETCH_MAX)));
    }

    /**
     * The bytes of records a task may hold fetched ahead of its copy ({@link FetchAhead}): the executor's Spark
     * configuration's {@value #FETCH_AHEAD}, in bytes or with a unit ({@code 100m}). 0, the default, or outside
     * Spark: none, the task polls its consumer itself.
     */
    static long fetchAheadBytes() {
        SparkEnv env = SparkEnv.get();
        return env == null ? 0 : env.conf().getSizeAsBytes(FETCH_AHEAD, "0");
    }

    @Override
    public String toString() {
        return "secure-mirror source settings";
    }
}
