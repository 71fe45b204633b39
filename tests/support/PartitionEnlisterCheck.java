package securemirror.sink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Compiled with jvm/sink's PartitionEnlister and run against the kafka-clients jar the job uses
 * (tests/unit/test_sink_enlist.py). Prints, one line each: whether the enlister resolved against this client; what
 * Kafka's transaction manager answers when asked, through it, to add a partition to the transaction of a
 * transactional producer that never called initTransactions (its own refusal: the call reached it); and, against a
 * class with no transaction manager, whether it resolved, what it warned and how often, before and after an enlist.
 */
public final class PartitionEnlisterCheck {
    public static void main(String[] args) throws Exception {
        System.out.println("resolved " + PartitionEnlister.CLIENT.resolved());
        Map<String, Object> settings = Map.of("bootstrap.servers", "localhost:1", "transactional.id", "enlist-check");
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
        List<TopicPartition> partitions = List.of(new TopicPartition("mirror.check", 0));
        try {
            PartitionEnlister.CLIENT.enlist(producer, partitions);
            System.out.println("enlisted");
        } catch (IllegalStateException refused) {
            System.out.println("refused " + refused.getMessage());
        }
        List<String> warned = new ArrayList<>();
        PartitionEnlister elsewhere = PartitionEnlister.resolve(Object.class, warned::add);
        System.out.println("elsewhere resolved " + elsewhere.resolved() + ", warned " + warned.size());
        elsewhere.enlist(producer, partitions);
        elsewhere.enlist(producer, partitions);
        System.out.println("after two enlists, warned " + warned.size());
        warned.forEach(warning -> System.out.println("warning " + warning));
        producer.close(Duration.ZERO);
    }
}
