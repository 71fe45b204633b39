package securemirror.source;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.AdminClientConfig;
import securemirror.sink.TokenLogin;

/**
 * What the mirror's source is told, from the read's options (the names of Spark's Kafka source where they mean the
 * same):
 * <ul>
 * <li>{@code kafka.*}: the source consumer's settings, identity included;</li>
 * <li>{@code subscribePattern}: a Java regex; the source reads every topic it matches whole (as
 *     {@code KafkaConsumer.subscribe(Pattern)}), internal topics never;</li>
 * <li>{@code startingOffsets}: {@code earliest} or {@code latest}, for the partitions of the first batch; partitions
 *     and topics that appear later are read from their earliest offset;</li>
 * <li>{@code failOnDataLoss}: {@code true} (default) fails the query when records the batch needs are gone;</li>
 * <li>{@code includeHeaders}, {@code maxOffsetsPerTrigger};</li>
 * <li>{@value #TASKS}: the tasks of each micro-batch (default: Spark's default parallelism); each task reads its
 *     share of the partitions with one consumer, and a partition always goes to the same task;</li>
 * <li>{@value #TOKEN_CLUSTER} and {@value #TOKEN_MECHANISM}: when set, executors log in with the Kafka delegation
 *     token Spark obtained for that cluster id, as the sink does ({@link TokenLogin}).</li>
 * </ul>
 * No setting is ever printed: {@link #toString()} names none.
 */
public final class SourceSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String TASKS = "mirror.tasks";
    public static final String TOKEN_CLUSTER = "mirror.token-cluster";
    public static final String TOKEN_MECHANISM = "mirror.token-mechanism";
    static final long DEFAULT_POLL_TIMEOUT_MS = 120_000;

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
        pattern = options.get("subscribePattern");
        if (pattern == null || pattern.isEmpty()) {
            throw new IllegalArgumentException("the mirror source needs subscribePattern");
        }
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
    }

    public static SourceSettings of(Map<String, String> options) {
        return new SourceSettings(options);
    }

    boolean readCommitted() {
        return !"read_uncommitted".equals(consumer.get("isolation.level"));
    }

    /** The driver's admin client settings: the consumer's connection and identity (the driver logs in itself). */
    Map<String, Object> adminSettings() {
        Map<String, Object> own = new HashMap<>();
        consumer.forEach((name, value) -> {
            if (AdminClientConfig.configNames().contains(name)) {
                own.put(name, value);
            }
        });
        return own;
    }

    /** An executor's consumer settings: logged in with the current delegation token if asked. */
    Map<String, Object> consumerSettings() {
        return tokenCluster == null ? consumer : TokenLogin.apply(consumer, tokenCluster, tokenMechanism);
    }

    @Override
    public String toString() {
        return "secure-mirror source settings";
    }
}
