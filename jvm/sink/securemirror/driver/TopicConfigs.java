package securemirror.driver;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
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
    private static final ObjectMapper JSON = new ObjectMapper();

    private TopicConfigs() {
    }

    /**
     * The config entries of each topic in {@code topicsJson} (a JSON array of names) through {@code admin}, as JSON:
     * {@code {"configs": {topic: [[name, value or null, source], ...]}, "errors": {topic: exception's simple name}}},
     * topics in the order asked. A topic whose answer failed is in {@code errors} only.
     */
    public static String describe(Admin admin, String topicsJson) throws JsonProcessingException, InterruptedException {
        List<String> topics = JSON.readValue(topicsJson, new TypeReference<List<String>>() { });
        Map<String, ConfigResource> keys = new LinkedHashMap<>();
        for (String topic : topics) {
            keys.put(topic, new ConfigResource(ConfigResource.Type.TOPIC, topic));
        }
        Map<ConfigResource, KafkaFuture<Config>> futures = admin.describeConfigs(keys.values()).values();
        Map<String, List<List<String>>> configs = new LinkedHashMap<>();
        Map<String, String> errors = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigResource> key : keys.entrySet()) {
            try {
                List<List<String>> entries = new ArrayList<>();
                for (ConfigEntry entry : futures.get(key.getValue()).get().entries()) {
                    entries.add(Arrays.asList(entry.name(), entry.value(), entry.source().name()));
                }
                configs.put(key.getKey(), entries);
            } catch (ExecutionException error) {
                Throwable cause = error.getCause() == null ? error : error.getCause();
                errors.put(key.getKey(), cause.getClass().getSimpleName());
            }
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("configs", configs);
        answer.put("errors", errors);
        return JSON.writeValueAsString(answer);
    }
}
