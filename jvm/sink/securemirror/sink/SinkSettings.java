package securemirror.sink;

import java.io.Serializable;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * What the sink is told, from the write's options:
 * <ul>
 * <li>{@code kafka.*}: the target producer's settings (identity included), as for Spark's Kafka sink;</li>
 * <li>{@value #PIECES}: JSON list, the target topic is the source topic joined with them (the rename rule);</li>
 * <li>{@value #KEPT}: JSON list of the source topics whose records keep their partition number;</li>
 * <li>{@value #PROVENANCE_ALIAS} and {@value #PROVENANCE_PREFIX}: when set, each record also gets the headers
 *     {@code <prefix>cluster, topic, partition, offset, timestamp};</li>
 * <li>{@value #GUARANTEE}: {@code at_least_once} (default) or {@code exactly_once};</li>
 * <li>{@value #TRANSACTIONAL_PREFIX}: with exactly_once, the start of the transactional ids (and consumer groups)
 *     of the source partitions, which append {@code <topic>-<partition>};</li>
 * <li>{@value #PRODUCER_PER}: with exactly_once, {@code partition} (default: a transactional producer per source
 *     partition) or {@code task} (one per write task, for a source whose task {@code i} reads the same partitions in
 *     every batch of a query, as the mirror's own source does: {@link TaskTransaction});</li>
 * <li>{@value #REPORT_KEY}: the key under which {@link Reports} keeps a batch write's figures (a streaming write's
 *     epoch: {@code <key>-<epoch>});</li>
 * <li>{@value #OFFSET_MAP}: when set, the target topic where the sink records, for each source partition whose
 *     partition is kept, which source offsets it wrote at which target offsets ({@link OffsetMap},
 *     docs/offset-map.md): in the write's transaction with exactly_once, after the write is acknowledged
 *     otherwise;</li>
 * <li>{@value #TOKEN_CLUSTER} and {@value #TOKEN_MECHANISM}: when set, the producers log in with the Kafka
 *     delegation token Spark obtained for that cluster id ({@code spark.kafka.clusters.<id>}), read at each task
 *     from the process's Hadoop credentials ({@link TokenLogin}), instead of the {@code kafka.sasl.jaas.config}
 *     given here; clients built with an older token are closed when a task sees a newer one.</li>
 * </ul>
 * No setting is ever printed: {@link #toString()} names none.
 */
public final class SinkSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String PIECES = "mirror.target-topic-pieces";
    public static final String KEPT = "mirror.keep-partition-topics";
    public static final String PROVENANCE_ALIAS = "mirror.provenance-alias";
    public static final String PROVENANCE_PREFIX = "mirror.provenance-prefix";
    public static final String GUARANTEE = "mirror.guarantee";
    public static final String TRANSACTIONAL_PREFIX = "mirror.transactional-prefix";
    public static final String JOB_KEY = "mirror.job-key";
    public static final String REPORT_KEY = "mirror.report-key";
    public static final String PRODUCER_PER = "mirror.producer-per";
    public static final String OFFSET_MAP = "mirror.offset-map-topic";
    public static final String TOKEN_CLUSTER = "mirror.token-cluster";
    public static final String TOKEN_MECHANISM = "mirror.token-mechanism";
    public static final String EXACTLY_ONCE = "exactly_once";
    public static final String AT_LEAST_ONCE = "at_least_once";

    public static final StructType SOURCE_ROW = new StructType()
        .add("key", DataTypes.BinaryType).add("value", DataTypes.BinaryType)
        .add("topic", DataTypes.StringType).add("partition", DataTypes.IntegerType)
        .add("offset", DataTypes.LongType).add("timestamp", DataTypes.TimestampType)
        .add("timestampType", DataTypes.IntegerType)
        .add("headers", DataTypes.createArrayType(new StructType()
            .add("key", DataTypes.StringType).add("value", DataTypes.BinaryType)));

    final HashMap<String, Object> producer = new HashMap<>();
    final List<String> pieces;
    final HashSet<String> kept;
    final String provenanceAlias;
    final String provenancePrefix;
    final Provenance provenance;  // provenance headers and the loop filter (Provenance.java)
    final boolean exactlyOnce;
    final String transactionalPrefix;
    final String jobKey;
    final boolean producerPerTask;
    final String reportKey;
    final String offsetMapTopic;
    final String tokenCluster;
    final String tokenMechanism;
    final int key, value, topic, partition, offset, timestamp, headers;

    private SinkSettings(Map<String, String> options, StructType schema) {
        options.forEach((name, text) -> {
            if (name.startsWith("kafka.")) {
                producer.put(name.substring("kafka.".length()), text);
            }
        });
        pieces = json(options, PIECES, List.of("", ""));
        kept = new HashSet<>(json(options, KEPT, List.of()));
        provenanceAlias = options.get(PROVENANCE_ALIAS);
        provenancePrefix = options.getOrDefault(PROVENANCE_PREFIX, "secure-mirror.");
        provenance = Provenance.of(options);
        String guarantee = options.getOrDefault(GUARANTEE, AT_LEAST_ONCE);
        if (!guarantee.equals(AT_LEAST_ONCE) && !guarantee.equals(EXACTLY_ONCE)) {
            throw new IllegalArgumentException(GUARANTEE + " must be at_least_once or exactly_once, not " + guarantee);
        }
        exactlyOnce = guarantee.equals(EXACTLY_ONCE);
        transactionalPrefix = options.get(TRANSACTIONAL_PREFIX);
        jobKey = options.get(JOB_KEY);
        if (exactlyOnce && (transactionalPrefix == null || transactionalPrefix.isEmpty())) {
            throw new IllegalArgumentException("exactly_once needs " + TRANSACTIONAL_PREFIX);
        }
        String per = options.getOrDefault(PRODUCER_PER, "partition");
        if (!per.equals("partition") && !per.equals("task")) {
            throw new IllegalArgumentException(PRODUCER_PER + " must be partition or task, not " + per);
        }
        producerPerTask = exactlyOnce && per.equals("task");
        reportKey = options.get(REPORT_KEY);
        String map = options.get(OFFSET_MAP);
        offsetMapTopic = map == null || map.isEmpty() ? null : map;
        tokenCluster = options.get(TOKEN_CLUSTER);
        tokenMechanism = options.getOrDefault(TOKEN_MECHANISM, "SCRAM-SHA-512");
        key = column(schema, "key", DataTypes.BinaryType, true);
        value = column(schema, "value", DataTypes.BinaryType, true);
        topic = column(schema, "topic", DataTypes.StringType, true);
        partition = column(schema, "partition", DataTypes.IntegerType, true);
        offset = column(schema, "offset", DataTypes.LongType, true);
        timestamp = column(schema, "timestamp", DataTypes.TimestampType, true);
        headers = column(schema, "headers", SOURCE_ROW.apply("headers").dataType(), false);
    }

    static SinkSettings of(Map<String, String> options, StructType schema) {
        return new SinkSettings(options, schema);
    }

    private static List<String> json(Map<String, String> options, String name, List<String> fallback) {
        String text = options.get(name);
        if (text == null) {
            return fallback;
        }
        try {
            return new ObjectMapper().readValue(text, new TypeReference<List<String>>() { });
        } catch (java.io.IOException error) {
            throw new IllegalArgumentException(name + " must be a JSON list of strings");
        }
    }

    private static int column(StructType schema, String name, DataType type, boolean required) {
        Set<String> names = Set.of(schema.fieldNames());
        if (!names.contains(name)) {
            if (required) {
                throw new IllegalArgumentException("the mirror sink needs a column " + name + " (" + type.simpleString()
                    + ") as Spark's Kafka source delivers it");
            }
            return -1;
        }
        int index = schema.fieldIndex(name);
        DataType actual = schema.fields()[index].dataType();
        if (!actual.sameType(type) && !(type instanceof ArrayType && actual instanceof ArrayType)) {
            throw new IllegalArgumentException("the mirror sink's column " + name + " is " + actual.simpleString()
                + ", not " + type.simpleString());
        }
        return index;
    }

    /** The clients' settings for a task: the producer's, logged in with the current delegation token if asked. */
    Map<String, Object> clientSettings() {
        return tokenCluster == null ? producer : TokenLogin.apply(producer, tokenCluster, tokenMechanism);
    }

    /** The target topic of a source topic under the rename rule. */
    String targetTopic(String sourceTopic) {
        return String.join(sourceTopic, pieces);
    }

    /** The transactional id, and consumer group on the target, of one source partition (exactly_once). */
    String transactionalId(String sourceTopic, int sourcePartition) {
        return transactionalPrefix + sourceTopic + "-" + sourcePartition;
    }

    /**
     * The transactional id of write task {@code slot} (exactly_once, one producer per task). A '#' never occurs in a
     * topic name, so it never meets a per-partition id ({@link #transactionalId}). With {@value #JOB_KEY}, the id
     * carries the job's key, so two jobs between the same clusters never fence each other's tasks.
     */
    String taskTransactionalId(int slot) {
        return transactionalPrefix + "task#" + (jobKey == null ? "" : jobKey + "#") + slot;
    }

    /** The group holding the positions of a source topic whose partitions are kept, one offset per partition. */
    String positionGroup(String sourceTopic) {
        return transactionalPrefix + "topic#" + sourceTopic;
    }

    @Override
    public String toString() {
        return "secure-mirror sink settings (" + (exactlyOnce ? EXACTLY_ONCE : AT_LEAST_ONCE) + ")";
    }
}
