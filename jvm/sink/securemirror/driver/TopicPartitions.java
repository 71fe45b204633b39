package securemirror.driver;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.RetriableException;

/**
 * The job's driver (secure_mirror/run/job/planning.py) asks for topics' partition counts through this, in one call
 * that answers plain JSON. Walking Kafka's answer from Python costs four Py4J round trips a topic, and the driver asks
 * for every topic the query has read every 10 s (the deleted-topic watch), on top of new topics and the shape sync
 * (benchmarks/NOTES.md section 22).
 */
public final class TopicPartitions {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TopicPartitions() {
    }

    /**
     * The partition count of each topic in {@code topicsJson} (a JSON array of names) through {@code admin}, as JSON:
     * {@code {"counts": {topic: count}, "errors": {topic: [exception's simple name, whether Kafka calls it retriable]}}},
     * topics in the order asked. A topic whose answer failed is in {@code errors} only.
     */
    public static String count(Admin admin, String topicsJson) throws JsonProcessingException, InterruptedException {
        List<String> topics = JSON.readValue(topicsJson, new TypeReference<List<String>>() { });
        Map<String, KafkaFuture<TopicDescription>> futures = admin.describeTopics(topics).topicNameValues();
        Map<String, Integer> counts = new LinkedHashMap<>();
        Map<String, List<Object>> errors = new LinkedHashMap<>();
        for (String topic : topics) {
            try {
                counts.put(topic, futures.get(topic).get().partitions().size());
            } catch (ExecutionException error) {
                Throwable cause = error.getCause() == null ? error : error.getCause();
                errors.put(topic, List.of(cause.getClass().getSimpleName(), cause instanceof RetriableException));
            }
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("counts", counts);
        answer.put("errors", errors);
        return JSON.writeValueAsString(answer);
    }
}
