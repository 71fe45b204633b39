package securemirror.sink;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Where a record came from, and the loop filter of both-way flows (docs/provenance.md).
 * <ul>
 * <li>With {@link SinkSettings#PROVENANCE_ALIAS} each record written gets the headers {@code <prefix>cluster} (the
 *     source's alias), {@code cluster-id} (the source's Kafka cluster id, {@value #SOURCE_CLUSTER_ID}, when the job
 *     found it), {@code topic}, {@code partition}, {@code offset} and {@code timestamp}, after the record's own
 *     (a record mirrored twice keeps the first hop's headers and gains the second's).</li>
 * <li>With {@value #TARGET_CLUSTER_ID} (the job sets it from the target's describeCluster), a record one of whose
 *     {@code <prefix>cluster-id} headers names the target came from there: the sink never writes it back, so two
 *     flows A to B and B to A with kept names run without loops, whichever Spark source reads.</li>
 * </ul>
 */
final class Provenance implements Serializable {
    private static final long serialVersionUID = 1L;
    static final String SOURCE_CLUSTER_ID = "mirror.provenance-cluster-id";
    static final String TARGET_CLUSTER_ID = "mirror.target-cluster-id";
    static final String CLUSTER_ID = "cluster-id";

    private final String prefix;
    private final String alias;
    private final String sourceId;
    private final UTF8String idName;
    private final byte[] targetId;

    private Provenance(Map<String, String> options) {
        prefix = options.getOrDefault(SinkSettings.PROVENANCE_PREFIX, "secure-mirror.");
        alias = options.get(SinkSettings.PROVENANCE_ALIAS);
        sourceId = options.get(SOURCE_CLUSTER_ID);
        idName = UTF8String.fromString(prefix + CLUSTER_ID);
        String target = options.get(TARGET_CLUSTER_ID);
        targetId = target == null || target.isEmpty() ? null : utf8(target);
    }

    static Provenance of(Map<String, String> options) {
        return new Provenance(options);
    }

    /** True when this header of a record is a provenance header that names the cluster this sink writes to. */
    boolean namesTarget(UTF8String key, byte[] value) {
        return targetId != null && key != null && value != null && key.equals(idName) && Arrays.equals(value, targetId);
    }

    /** The provenance headers of one record, when the profile asks for them. */
    void addTo(RecordHeaders headers, String topic, int partition, long offset, long stamp) {
        if (alias == null) {
            return;
        }
        headers.add(prefix + "cluster", utf8(alias));
        if (sourceId != null && !sourceId.isEmpty()) {
            headers.add(prefix + CLUSTER_ID, utf8(sourceId));
        }
        headers.add(prefix + "topic", utf8(topic));
        headers.add(prefix + "partition", utf8(Integer.toString(partition)));
        headers.add(prefix + "offset", utf8(Long.toString(offset)));
        headers.add(prefix + "timestamp", utf8(Long.toString(stamp)));
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
