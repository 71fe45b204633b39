package securemirror.source;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Compiled with jvm/sink's source (tests/integration/test_wan_live.py). Arguments: a client properties file (the
 * rendered source {@code client.properties}), a topic, and the bytes of one fetch response. Reads the topic whole
 * with {@link FetchAhead}, bounded at two responses, as a task fetching ahead does, and prints one line each:
 * <ul>
 * <li>{@code fetches-before-any-take N HELD}: the consumer's fetch requests, and the bytes held for the task, once its
 *     fetch count stopped rising (or after 30 s) while the task had taken nothing;</li>
 * <li>{@code read N in-order B of M}: the records taken, whether each partition's came once each, in offset order,
 *     and the offsets between the partitions' starts and ends;</li>
 * <li>{@code read-whole B}: what {@code stop} said after the last take (true: the consumer may serve the next
 *     task);</li>
 * <li>{@code read-inline N B}: the records a second read took with no bound (the task polling itself: no thread),
 *     and what {@code stop} said;</li>
 * <li>{@code read-halves N in-order B W}: a fourth read polled by the task itself that asks for half the partitions
 *     first, as over more partitions than one response carries: the records taken, their order, and what
 *     {@code stop} said;</li>
 * <li>{@code stopped-mid-read B MS}: what {@code stop} said for a third read stopped after its first take, and its
 *     milliseconds.</li>
 * </ul>
 */
public final class FetchAheadCheck {
    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        Properties client = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            client.load(in);
        }
        client.stringPropertyNames().forEach(key -> options.put("kafka." + key, client.getProperty(key)));
        options.put("kafka.fetch.max.bytes", args[2]);
        options.put("subscribe", args[1]);
        SourceSettings settings = SourceSettings.of(options);
        long most = 2 * settings.responseBytes();

        try (KafkaConsumer<byte[], byte[]> consumer = consumer(settings, args[1])) {
            Map<TopicPartition, Long> from = consumer.beginningOffsets(consumer.assignment());
            Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment());
            long expected = 0;
            for (TopicPartition tp : ends.keySet()) {
                consumer.seek(tp, from.get(tp));
                expected += ends.get(tp) - from.get(tp);
            }
            FetchAhead ahead = new FetchAhead(consumer, settings, ends, Integer.MAX_VALUE, most, "check fetch-ahead");
            double fetches = settled(consumer);
            System.out.println("fetches-before-any-take " + (long) fetches + " " + ahead.queued());
            System.out.println("read " + takeAll(ahead, from) + " of " + expected);
            System.out.println("read-whole " + ahead.stop());
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(settings, args[1])) {
            consumer.seekToBeginning(consumer.assignment());
            Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment());
            FetchAhead inline = new FetchAhead(consumer, settings, ends, Integer.MAX_VALUE, 0, "unused");
            long read = 0;
            for (FetchAhead.Polled polled = inline.take(); polled != null; polled = inline.take()) {
                read += polled.records().size();
            }
            System.out.println("read-inline " + read + " " + inline.stop());
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(settings, args[1])) {
            Map<TopicPartition, Long> from = consumer.beginningOffsets(consumer.assignment());
            from.forEach(consumer::seek);
            Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment());
            FetchAhead halves = new FetchAhead(consumer, settings, ends, 1, 0, "unused");
            System.out.println("read-halves " + takeAll(halves, from) + " " + halves.stop());
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(settings, args[1])) {
            consumer.seekToBeginning(consumer.assignment());
            Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment());
            FetchAhead ahead = new FetchAhead(consumer, settings, ends, Integer.MAX_VALUE, most,
                                              "check fetch-ahead stopped");
            ahead.take();
            long started = System.nanoTime();
            boolean whole = ahead.stop();
            System.out.println("stopped-mid-read " + whole + " " + (System.nanoTime() - started) / 1_000_000);
        }
    }

    /** Takes every record: how many, and whether each partition's came once each, in offset order from {@code from}. */
    private static String takeAll(FetchAhead ahead, Map<TopicPartition, Long> from) throws InterruptedException {
        Map<TopicPartition, Long> next = new HashMap<>(from);
        long read = 0;
        boolean inOrder = true;
        for (FetchAhead.Polled polled = ahead.take(); polled != null; polled = ahead.take()) {
            for (ConsumerRecord<byte[], byte[]> record : polled.records()) {
                inOrder &= record.offset() == next.get(polled.tp());
                next.put(polled.tp(), record.offset() + 1);
                read++;
            }
        }
        return read + " in-order " + inOrder;
    }

    private static KafkaConsumer<byte[], byte[]> consumer(SourceSettings settings, String topic) throws IOException {
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(settings.consumerSettings(3),
            new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = new ArrayList<>();
        for (PartitionInfo info : consumer.partitionsFor(topic)) {
            partitions.add(new TopicPartition(topic, info.partition()));
        }
        consumer.assign(partitions);
        return consumer;
    }

    /** The consumer's fetch requests so far, once they have not risen for 3 s (at most 30 s). */
    private static double settled(KafkaConsumer<byte[], byte[]> consumer) throws InterruptedException {
        double last = -1;
        long still = System.currentTimeMillis();
        long deadline = still + 30_000;
        while (System.currentTimeMillis() < deadline) {
            double now = fetchTotal(consumer);
            if (now != last) {
                last = now;
                still = System.currentTimeMillis();
            } else if (System.currentTimeMillis() - still > 3_000) {
                break;
            }
            Thread.sleep(200);
        }
        return last;
    }

    private static double fetchTotal(KafkaConsumer<byte[], byte[]> consumer) {
        for (Map.Entry<MetricName, ? extends Metric> metric : consumer.metrics().entrySet()) {
            MetricName name = metric.getKey();
            if (name.group().equals("consumer-fetch-manager-metrics") && name.name().equals("fetch-total")
                    && name.tags().size() == 1) {
                return ((Number) metric.getValue().metricValue()).doubleValue();
            }
        }
        throw new IllegalStateException("the consumer has no fetch-total metric");
    }
}
