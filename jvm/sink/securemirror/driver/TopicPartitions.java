package securemirror.driver;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
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
    private TopicPartitions() {
    }

    /**
     * The partition count of each topic in {@code topicsJson} (a JSON array of names) through {@code admin}, as JSON:
     * {@code {"counts": {topic: count}, "errors": {topic: [exception's simple name, whether Kafka calls it retriable]}}},
     * topics in the order asked. A topic whose answer failed is in {@code errors} only.
     */
    public static String count(Admin admin, String topicsJson) throws JsonProcessingException, InterruptedException {
        List<String> topics = BulkAnswer.topics(topicsJson);
        Map<String, KafkaFuture<TopicDescription>> futures = admin.describeTopics(topics).topicNameValues();
        return BulkAnswer.of("counts", topics, futures::get, description -> description.partitions().size(),
            cause -> List.of(cause.getClass().getSimpleName(), cause instanceof RetriableException));
    }
}
