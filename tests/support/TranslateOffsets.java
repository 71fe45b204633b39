import java.io.FileInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * Kafka's own {@code RemoteClusterUtils.translateOffsets(props, <source alias>, <group>, timeout)} against the target,
 * for tests/integration/test_failover.py. Arguments: a client properties file (the rendered target/client.properties),
 * the source cluster's alias, the group. Prints {@code <topic> <partition> <offset>} lines, tab-separated, sorted.
 */
public class TranslateOffsets {
    public static void main(String[] args) throws Exception {
        Properties file = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            file.load(in);
        }
        Map<String, Object> props = new HashMap<>();
        for (String name : file.stringPropertyNames()) {
            props.put(name, file.getProperty(name));
        }
        Map<TopicPartition, OffsetAndMetadata> offsets =
            RemoteClusterUtils.translateOffsets(props, args[1], args[2], Duration.ofSeconds(60));
        Map<String, Long> sorted = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : offsets.entrySet()) {
            sorted.put(entry.getKey().topic() + "\t" + entry.getKey().partition(), entry.getValue().offset());
        }
        for (Map.Entry<String, Long> entry : sorted.entrySet()) {
            System.out.println(entry.getKey() + "\t" + entry.getValue());
        }
    }
}
