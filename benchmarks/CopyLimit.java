import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The copy limit of the benchmark: the least a mirror can do, in one JVM. {@code threads} loops, each a consumer
 * assigned its share of the source partitions from the beginning and a producer writing every record to the
 * same partition of the target topic with its key, value, headers and timestamp; until every record that was
 * in the source at start has been sent and acknowledged. The connection and security settings, acks, idempotence,
 * compression and the source's isolation level are the job's own (the {@code kafka.*} options render wrote for
 * Spark's source and for the mirror's sink): the same bytes with the same durability as the contenders it bounds.
 *
 * <p>On top of them it is tuned as the best plain consumer-producer loop would be, so that it stays the ceiling at
 * every partition count (on the job's settings alone it was slower than both the job and MirrorMaker 2 at 5,000
 * partitions, issue 43); {@link #tunedConsumer} and {@link #tunedProducer} set:
 * <ul>
 * <li>the consumer's {@code max.poll.records} left at Kafka's 500: with 10,000, a poll's records outlived the young
 *     collections that came while the loop sent them; at 5,000 partitions the loop's 1 GiB heap filled, its
 *     collectors paused it 3.7 to 4.1 s a run instead of 1.0 to 1.2 s, and it copied 0.77x as fast (NOTES.md
 *     section 18);</li>
 * <li>the consumer's {@code fetch.max.bytes} 50 MiB (its default, the broker's cap is 55 MiB) and
 *     {@code max.partition.fetch.bytes} that over the loop's partitions, at least 1 MiB (the default, kept at
 *     thousands of partitions, where one response still covers about 50 of them) and at most 16 MiB (a few
 *     partitions: fewer, larger fetches instead of 1 MiB per partition and round trip);</li>
 * <li>the producer's {@code linger.ms} 100, and its {@code batch.size} the pool ({@code buffer.memory}) over the
 *     loop's partitions, at least 256 KiB (the profile's default) and at most 1 MiB (the profile's largest, under
 *     the brokers' message.max.bytes once compressed): with a few partitions each partition's records go in as few
 *     appends as they can, and at thousands a partition's share (about 200 KiB at 1,000,000 records over 5,000)
 *     still arrives in one fetch and leaves in one batch (a second append into a fresh segment writes its first
 *     index entry: NOTES.md section 8, results/first-index.md). Against 1 MiB at every size it made no difference
 *     beyond the spread at 1,000 and 5,000 partitions (NOTES.md section 18);</li>
 * <li>{@code buffer.memory} 192 MiB (default 32 MiB): room for a batch in every partition being filled, up to 192
 *     partitions a loop at 1 MiB and 768 at 256 KiB, so that {@code send} does not wait on the pool while the
 *     sender drains; two loops' pools and fetches stay within the 1 GiB heap;</li>
 * <li>one producer per loop, not one shared: a producer's single sender thread encrypts (TLS) and sends, and two
 *     loops on two CPUs keep two senders busy; the loops' partitions are disjoint, so sharing would not batch
 *     more;</li>
 * <li>nothing allocated per record but the {@link ProducerRecord} the API takes: one callback per loop, the target
 *     topic looked up once per partition of a poll, the loop's end checked only for the partitions a poll returned
 *     (all of them after an empty poll), a finished partition paused.</li>
 * </ul>
 * A JVM system property {@code copylimit.producer.<setting>} or {@code copylimit.consumer.<setting>} replaces the
 * producer's or the consumer's setting it names: a benchmark contender that asks what one setting does
 * ({@code benchmarks/contenders.py}).
 *
 * <p>Usage: {@code CopyLimit source-options.json sink-options.json source-topics target-topics threads}, the topics
 * comma-separated, each source topic copied into the target topic at the same place in the list; the topics'
 * partitions, in order, are dealt to the loops in turn.
 */
public final class CopyLimit {
    static final int FETCH_MAX_BYTES = 50 * 1024 * 1024;
    static final int MIB = 1024 * 1024;
    static final String PRODUCER_OVERRIDE = "copylimit.producer.";
    static final String CONSUMER_OVERRIDE = "copylimit.consumer.";

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
                    copy(tunedConsumer(consumer, mine.size()), tunedProducer(producer, mine.size()), mine, targetOf);
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

    /** The job's consumer settings tuned for a loop of {@code partitions} partitions (the class comment says how). */
    static Map<String, Object> tunedConsumer(Map<String, Object> job, int partitions) {
        Map<String, Object> out = new HashMap<>(job);
        out.put("fetch.max.bytes", Integer.toString(FETCH_MAX_BYTES));
        int perPartition = Math.max(MIB, Math.min(16 * MIB, FETCH_MAX_BYTES / Math.max(1, partitions)));
        out.put("max.partition.fetch.bytes", Integer.toString(perPartition));
        return overridden(out, CONSUMER_OVERRIDE);
    }

    /** The job's producer settings tuned for a loop of {@code partitions} partitions (the class comment says how);
     * acks, idempotence, compression kept; then the {@code copylimit.producer.*} system properties. */
    static Map<String, Object> tunedProducer(Map<String, Object> job, int partitions) {
        Map<String, Object> out = new HashMap<>(job);
        long pool = 192L * MIB;
        long batch = Math.max(256 * 1024, Math.min(MIB, pool / Math.max(1, partitions)));
        out.put("batch.size", Long.toString(batch));
        out.put("linger.ms", "100");
        out.put("buffer.memory", Long.toString(pool));
        return overridden(out, PRODUCER_OVERRIDE);
    }

    /** {@code settings} with the system properties named {@code prefix}{@code <setting>} put over them. */
    static Map<String, Object> overridden(Map<String, Object> settings, String prefix) {
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith(prefix)) {
                settings.put(name.substring(prefix.length()), System.getProperty(name));
            }
        }
        return settings;
    }

    /** The first failed send of a loop, one instance for all its records. */
    private static final class Sent implements Callback {
        private volatile Exception failure;

        @Override
        public void onCompletion(RecordMetadata metadata, Exception error) {
            if (error != null && failure == null) {
                failure = error;
            }
        }

        void check() {
            if (failure != null) {
                throw new IllegalStateException(failure);
            }
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
            Map<TopicPartition, Long> starts = in.beginningOffsets(mine);
            Set<TopicPartition> left = new HashSet<>();
            for (TopicPartition tp : mine) {
                if (ends.get(tp) > starts.get(tp)) {
                    left.add(tp);
                }
            }
            Sent sent = new Sent();
            while (!left.isEmpty()) {
                ConsumerRecords<byte[], byte[]> batch = in.poll(Duration.ofMillis(500));
                for (TopicPartition tp : batch.partitions()) {
                    String target = targetOf.get(tp.topic());
                    for (ConsumerRecord<byte[], byte[]> r : batch.records(tp)) {
                        out.send(new ProducerRecord<>(target, tp.partition(), r.timestamp(), r.key(), r.value(),
                            r.headers()), sent);
                    }
                }
                finished(in, batch.isEmpty() ? new ArrayList<>(left) : batch.partitions(), ends, left);
                sent.check();
            }
            out.flush();
            sent.check();
        }
    }

    /** Removes from {@code left}, and pauses, those of {@code polled} whose position reached their end offset. */
    private static void finished(KafkaConsumer<byte[], byte[]> in, Collection<TopicPartition> polled,
            Map<TopicPartition, Long> ends, Set<TopicPartition> left) {
        List<TopicPartition> done = new ArrayList<>();
        for (TopicPartition tp : polled) {
            if (left.contains(tp) && in.position(tp) >= ends.get(tp)) {
                done.add(tp);
            }
        }
        if (!done.isEmpty()) {
            left.removeAll(done);
            in.pause(done);
        }
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
