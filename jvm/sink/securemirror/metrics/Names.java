package securemirror.metrics;

import java.util.regex.Pattern;

import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * Where a mirrored topic-partition's figures are named: MirrorMaker 2's JMX object name and the matching name in
 * Spark's metrics system. A name holds the two cluster aliases, the target topic and the partition number, and for a
 * consumer group's checkpoints the group ({@code type=MirrorCheckpointConnector}; null for the source connector's
 * figures), each checked against the characters the profile allows for it (an alias: letters, digits, {@code _},
 * {@code -}; a topic: Kafka's legal characters; a group: the same as a topic, the characters a JMX name and a Spark
 * metric name take unquoted), so that nothing else - an option, a secret - can reach a name or a tag.
 */
record Names(String source, String target, String group, String topic, int partition) {
    static final String DOMAIN = "kafka.connect.mirror";
    static final String TYPE = "MirrorSourceConnector";
    static final String CHECKPOINT_TYPE = "MirrorCheckpointConnector";
    private static final Pattern ALIAS = Pattern.compile("[A-Za-z0-9_-]{1,249}");
    private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");

    Names {
        if (!ALIAS.matcher(source).matches() || !ALIAS.matcher(target).matches()) {
            throw new IllegalArgumentException("a cluster alias has characters a profile's alias cannot have");
        }
        if (group != null && !TOPIC.matcher(group).matches()) {
            throw new IllegalArgumentException("a consumer group's name has other characters than letters, digits, "
                + "'.', '_' and '-' (its checkpoint figures stay in the metrics file)");
        }
        if (!TOPIC.matcher(topic).matches()) {
            throw new IllegalArgumentException("a target topic has characters Kafka does not allow in a topic name");
        }
        if (partition < 0) {
            throw new IllegalArgumentException("a negative partition number");
        }
    }

    /** A topic-partition's name under MirrorMaker 2's source connector. */
    Names(String source, String target, String topic, int partition) {
        this(source, target, null, topic, partition);
    }

    String type() {
        return group == null ? TYPE : CHECKPOINT_TYPE;
    }

    /**
     * MirrorMaker 2's (Kafka 3.5 and later with its source tag, always since 4.0): {@code
     * kafka.connect.mirror:type=MirrorSourceConnector,source=<alias>,target=<alias>,topic=<target topic>,
     * partition=<n>}, or {@code type=MirrorCheckpointConnector,source=<alias>,target=<alias>,group=<group>,
     * topic=<target topic>,partition=<n>} ({@code MirrorCheckpointMetrics}), the keys in this order, as Kafka's
     * JmxReporter writes them (exporter rules match on it).
     */
    ObjectName objectName() {
        String name = DOMAIN + ":type=" + type() + ",source=" + source + ",target=" + target + groupTag("=", ",")
            + ",topic=" + topic + ",partition=" + partition;
        try {
            return new ObjectName(name);
        } catch (MalformedObjectNameException error) {
            throw new IllegalArgumentException(error.getMessage(), error);
        }
    }

    /**
     * The name in the Spark source's registry (Spark prefixes {@code <namespace>.driver.kafka.connect.mirror.}):
     * {@code MirrorSourceConnector.source.<alias>.target.<alias>.topic.<target topic>.partition.<n>.<attribute>}, or
     * {@code MirrorCheckpointConnector.source.<alias>.target.<alias>.group.<group>.topic.<target topic>...}.
     */
    String metric(String attribute) {
        return type() + ".source." + source + ".target." + target + groupTag(".", ".") + ".topic." + topic
            + ".partition." + partition + "." + attribute;
    }

    private String groupTag(String is, String separator) {
        return group == null ? "" : separator + "group" + is + group;
    }
}
