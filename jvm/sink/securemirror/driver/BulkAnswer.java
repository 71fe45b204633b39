package securemirror.driver;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.KafkaFuture;

/**
 * What the driver's bulk questions ({@link TopicConfigs}, {@link TopicPartitions}) share: the topics asked for, as a
 * JSON array of names, and the answer, as JSON: {@code {<field>: {topic: value}, "errors": {topic: failure}}}, topics
 * in the order asked, a topic whose answer failed in {@code errors} only.
 */
final class BulkAnswer {
    private static final ObjectMapper JSON = new ObjectMapper();

    private BulkAnswer() {
    }

    /** The topic names of a JSON array. */
    static List<String> topics(String topicsJson) throws JsonProcessingException {
        return JSON.readValue(topicsJson, new TypeReference<List<String>>() { });
    }

    /**
     * Each topic's answer from {@code futureOf}, as {@code value} makes it, under {@code field}; where it failed, what
     * {@code failure} makes of Kafka's exception, under {@code errors}.
     */
    static <T> String of(String field, List<String> topics, Function<String, KafkaFuture<T>> futureOf,
            Function<T, Object> value, Function<Throwable, Object> failure)
            throws JsonProcessingException, InterruptedException {
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, Object> errors = new LinkedHashMap<>();
        for (String topic : topics) {
            try {
                values.put(topic, value.apply(futureOf.apply(topic).get()));
            } catch (ExecutionException error) {
                errors.put(topic, failure.apply(error.getCause() == null ? error : error.getCause()));
            }
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put(field, values);
        answer.put("errors", errors);
        return JSON.writeValueAsString(answer);
    }
}
