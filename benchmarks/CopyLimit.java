import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The copy limit of the benchmark: the least a mirror can do, in one JVM. {@code threads} loops, each a consumer
 * assigned its share of the source partitions from the beginning and a producer writing every record to the
 * same partition of the target topic with its key, value, headers and timestamp; until every record that was
 * in the source at start has been sent and acknowledged. The consumer and producer settings are the job's own
 * (the {@code kafka.*} options render wrote for Spark's source and for the mirror's sink), so it runs with the
 * same security, batching and compression as the contenders it bounds.
 *
 * <p>Usage: {@code CopyLimit source-options.json sink-options.json source-topics target-topics threads}, the topics
 * comma-separated, each source topic copied into the target topic at the same place in the list; the topics'
 * partitions, in order, are dealt to the loops in turn.
 */
public final class CopyLimit {
    public static void main(String[] args) throws Exception {
        Map<String, Object> consumer = kafkaSettings(args[0]);
        Map<String, Object> producer = kafkaSettings(args[1]);
        String[] sources = args[2].split(",");
        String[] targets = args[3].split(",");
        int threads = Integer.parseInt(args[4]);
        consumer.put("enable.auto.commit", "false");
        consumer.remove("group.id");
        Map<String, String> targetOf = new HashMap<>();
        List<TopicPartition> partitions = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> meta = consumer(consumer)) {
            for (int t = 0; t < sources.length; t++) {
                targetOf.put(sources[t], targets[t]);
                List<TopicPartition> ofTopic = new ArrayList<>();
                for (PartitionInfo info : meta.partitionsFor(sources[t])) {
                    ofTopic.add(new TopicPartition(sources[t], info.partition()));
                }
                ofTopic.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
                partitions.addAll(ofTopic);
            }
        }
        AtomicReference<Throwable> failed = new AtomicReference<>();
        List<Thread> loops = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            List<TopicPartition> mine = new ArrayList<>();
            for (int j = i; j < partitions.size(); j += threads) {
                mine.add(partitions.get(j));
            }
            Thread loop = new Thread(() -> {
                try {
                    copy(consumer, producer, mine, targetOf);
                } catch (Throwable t) {
                    failed.compareAndSet(null, t);
                }
            }, "copy-" + i);
            loop.start();
            loops.add(loop);
        }
        for (Thread loop : loops) {
            loop.join();
        }
        if (failed.get() != null) {
            failed.get().printStackTrace();
            System.exit(1);
        }
    }

    private static void copy(Map<String, Object> consumerSettings, Map<String, Object> producerSettings,
            List<TopicPartition> mine, Map<String, String> targetOf) {
        if (mine.isEmpty()) {
            return;
        }
        try (KafkaConsumer<byte[], byte[]> in = consumer(consumerSettings);
                KafkaProducer<byte[], byte[]> out = new KafkaProducer<>(new HashMap<>(producerSettings),
                    new ByteArraySerializer(), new ByteArraySerializer())) {
            in.assign(mine);
            in.seekToBeginning(mine);
            Map<TopicPartition, Long> ends = in.endOffsets(mine);
            AtomicReference<Exception> sendFailed = new AtomicReference<>();
            while (!done(in, ends)) {
                ConsumerRecords<byte[], byte[]> batch = in.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    String target = targetOf.get(r.topic());
                    out.send(new ProducerRecord<>(target, r.partition(), r.timestamp(), r.key(), r.value(), r.headers()),
                        (meta, error) -> {
                            if (error != null) {
                                sendFailed.compareAndSet(null, error);
                            }
                        });
                }
                if (sendFailed.get() != null) {
                    throw new IllegalStateException(sendFailed.get());
                }
            }
            out.flush();
            if (sendFailed.get() != null) {
                throw new IllegalStateException(sendFailed.get());
            }
        }
    }

    private static boolean done(KafkaConsumer<byte[], byte[]> in, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            if (in.position(end.getKey()) < end.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> settings) {
        return new KafkaConsumer<>(new HashMap<>(settings), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** The {@code kafka.*} entries of one of render's Spark option files (a flat JSON object), prefix dropped. */
    private static Map<String, Object> kafkaSettings(String file) throws Exception {
        Map<String, Object> out = new HashMap<>();
        new ObjectMapper().readTree(new File(file)).properties().forEach(e -> {
            if (e.getKey().startsWith("kafka.")) {
                out.put(e.getKey().substring("kafka.".length()), e.getValue().asText());
            }
        });
        return out;
    }
}
