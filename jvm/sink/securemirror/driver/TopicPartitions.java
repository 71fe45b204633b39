package securemirror.driver;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
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
        return count(admin, topicsJson, 0);
    }

    /** The same, each answer bounded by {@code timeoutMs} (0: the admin client's own default): a watch that must not
     * wait a minute for a cluster that is away (a topic whose answer did not come in time is a retriable error). */
    public static String count(Admin admin, String topicsJson, int timeoutMs) throws JsonProcessingException,
            InterruptedException {
        List<String> topics = BulkAnswer.topics(topicsJson);
        DescribeTopicsOptions options = new DescribeTopicsOptions();
        if (timeoutMs > 0) {
            options.timeoutMs(timeoutMs);
        }
        Map<String, KafkaFuture<TopicDescription>> futures = admin.describeTopics(topics, options).topicNameValues();
        return BulkAnswer.of("counts", topics, futures::get, description -> description.partitions().size(),
            cause -> List.of(cause.getClass().getSimpleName(), cause instanceof RetriableException));
    }
}
