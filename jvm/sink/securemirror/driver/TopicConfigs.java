package securemirror.driver;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The job's driver (secure_mirror/run/job/planning.py) asks for topics' configs through this, in one call that
 * answers plain JSON. Walking Kafka's answer from Python instead costs a Py4J round trip for every entry and every
 * field of it, about 240 per topic, and the shape sync asks every interval for every mirrored topic on both sides
 * (over 200 topics it took most of the driver's Python time: benchmarks/NOTES.md section 21).
 */
public final class TopicConfigs {
    private TopicConfigs() {
    }

    /**
     * The config entries of each topic in {@code topicsJson} (a JSON array of names) through {@code admin}, as JSON:
     * {@code {"configs": {topic: [[name, value or null, source], ...]}, "errors": {topic: exception's simple name}}},
     * topics in the order asked. A topic whose answer failed is in {@code errors} only.
     */
    public static String describe(Admin admin, String topicsJson) throws JsonProcessingException, InterruptedException {
        List<String> topics = BulkAnswer.topics(topicsJson);
        Map<String, ConfigResource> keys = new LinkedHashMap<>();
        for (String topic : topics) {
            keys.put(topic, new ConfigResource(ConfigResource.Type.TOPIC, topic));
        }
        Map<ConfigResource, KafkaFuture<Config>> futures = admin.describeConfigs(keys.values()).values();
        return BulkAnswer.of("configs", topics, topic -> futures.get(keys.get(topic)), TopicConfigs::entries,
            cause -> cause.getClass().getSimpleName());
    }

    private static List<List<String>> entries(Config config) {
        List<List<String>> entries = new ArrayList<>();
        for (ConfigEntry entry : config.entries()) {
            entries.add(Arrays.asList(entry.name(), entry.value(), entry.source().name()));
        }
        return entries;
    }
}
