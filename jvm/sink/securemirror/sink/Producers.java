package securemirror.sink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Kafka clients of one executor. at_least_once tasks share one producer per setting set (as Spark's Kafka
 * sink does); exactly_once tasks get a transactional producer per source partition, and read the position the
 * target holds for it through one shared admin client. A transactional producer whose task committed waits here,
 * with the position it committed, for the next batch's task of the same source partition on this executor: that
 * task skips {@code initTransactions} and the position read. If another executor has taken the transactional id
 * since, the broker has fenced this producer: its writes fail and never become visible, the task fails and its
 * retry starts afresh.
 */
final class Producers {
    /** A transactional producer between two tasks, and the next source offset it committed. */
    record Idle(KafkaProducer<byte[], byte[]> producer, long next) {
    }

    /** A task's transactional producer between two tasks of its slot, and the next source offset of each lane it
     * committed (by {@link Lane#key}). */
    record IdleTask(KafkaProducer<byte[], byte[]> producer, Map<String, Long> next) {
    }

    /** Where an idle producer waits: the settings it was built with and its transactional id. */
    private record IdleKey(Map<String, Object> settings, String transactionalId) {
    }

    private static final Map<Map<String, Object>, KafkaProducer<byte[], byte[]>> SHARED = new ConcurrentHashMap<>();
    private static final Map<IdleKey, Idle> IDLE = new ConcurrentHashMap<>();
    private static final Map<IdleKey, IdleTask> IDLE_TASKS = new ConcurrentHashMap<>();
    private static final Map<Map<String, Object>, Admin> ADMINS = new ConcurrentHashMap<>();
    private static final long ASK_SECONDS = 120;
    private static final long UNSTABLE_PAUSE_MS = 100;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Producers.class);

    private Producers() {
    }

    static KafkaProducer<byte[], byte[]> create(Map<String, Object> settings) {
        return new KafkaProducer<>(new HashMap<>(settings), new ByteArraySerializer(), new ByteArraySerializer());
    }

    static KafkaProducer<byte[], byte[]> shared(Map<String, Object> settings) {
        return SHARED.computeIfAbsent(settings, Producers::create);
    }

    /** Forget a shared producer that failed (a fatal error leaves a Kafka producer unusable). */
    static void evict(Map<String, Object> settings, KafkaProducer<byte[], byte[]> producer) {
        if (SHARED.remove(settings, producer)) {
            producer.close(Duration.ofSeconds(5));
        }
    }

    static KafkaProducer<byte[], byte[]> transactional(Map<String, Object> settings, String transactionalId) {
        Map<String, Object> own = new HashMap<>(settings);
        own.put("transactional.id", transactionalId);
        own.put("enable.idempotence", "true");
        own.put("acks", "all");
        return create(own);
    }

    /** The idle producer of a transactional id (taken: no other task gets it), or null. */
    static Idle takeIdle(Map<String, Object> settings, String transactionalId) {
        return IDLE.remove(new IdleKey(settings, transactionalId));
    }

    static void keepIdle(Map<String, Object> settings, String transactionalId, Idle idle) {
        Idle before = IDLE.put(new IdleKey(settings, transactionalId), idle);
        if (before != null && before.producer() != idle.producer()) {
            before.producer().close(Duration.ZERO);
        }
    }

    static IdleTask takeIdleTask(Map<String, Object> settings, String transactionalId) {
        return IDLE_TASKS.remove(new IdleKey(settings, transactionalId));
    }

    static void keepIdleTask(Map<String, Object> settings, String transactionalId, IdleTask idle) {
        IdleTask before = IDLE_TASKS.put(new IdleKey(settings, transactionalId), idle);
        if (before != null && before.producer() != idle.producer()) {
            before.producer().close(Duration.ZERO);
        }
    }

    /**
     * Close and forget every client built with another login for the same target (an older delegation token: the
     * driver obtained a newer one, which reached this executor); a new connection with the old token would fail
     * once the brokers expire it. A kept transactional producer is replaced by one with the same transactional id,
     * whose {@code initTransactions} fences the old one. A task of this executor still sending through a closed
     * shared producer (it read the older token just before) fails and Spark runs it again, with the newer one.
     */
    static void retireOlderLogins(Map<String, Object> current) {
        int before = SHARED.size() + IDLE.size() + IDLE_TASKS.size() + ADMINS.size();
        SHARED.entrySet().removeIf(entry -> TokenLogin.sameButLogin(entry.getKey(), current)
            && TokenLogin.retire("producer", () -> entry.getValue().close(Duration.ofSeconds(5))));
        IDLE.entrySet().removeIf(entry -> TokenLogin.sameButLogin(entry.getKey().settings(), current)
            && TokenLogin.retire("producer", () -> entry.getValue().producer().close(Duration.ofSeconds(5))));
        IDLE_TASKS.entrySet().removeIf(entry -> TokenLogin.sameButLogin(entry.getKey().settings(), current)
            && TokenLogin.retire("producer", () -> entry.getValue().producer().close(Duration.ofSeconds(5))));
        ADMINS.entrySet().removeIf(entry -> TokenLogin.sameButLogin(entry.getKey(), current)
            && TokenLogin.retire("admin client", () -> entry.getValue().close(Duration.ofSeconds(5))));
        int retired = before - (SHARED.size() + IDLE.size() + IDLE_TASKS.size() + ADMINS.size());
        if (retired > 0) {
            LOG.info("secure-mirror sink: closed {} Kafka client(s) logged in with an older delegation token; "
                + "new ones log in with the token this executor holds now", retired);
        }
    }

    /** The next source offset the target holds for a source partition (committed with its records), or -1. */
    static long committed(Map<String, Object> settings, String group, TopicPartition key)
            throws InterruptedException, ExecutionException, TimeoutException {
        return committedMax(settings, Map.of(group, key));
    }

    /**
     * The next source offset the target holds for a source partition whose position may be in any of several groups
     * (each with the key it uses there), or -1: the largest, as a position only ever moves forward. One request,
     * read stable ({@link #committedAll}).
     */
    static long committedMax(Map<String, Object> settings, Map<String, TopicPartition> where)
            throws InterruptedException, ExecutionException, TimeoutException {
        Map<String, List<TopicPartition>> asked = new HashMap<>();
        where.forEach((group, key) -> asked.put(group, List.of(key)));
        Map<String, Map<TopicPartition, OffsetAndMetadata>> held = committedAll(settings, asked);
        long found = -1;
        for (Map.Entry<String, TopicPartition> entry : where.entrySet()) {
            OffsetAndMetadata offset = held.get(entry.getKey()).get(entry.getValue());
            if (offset != null) {
                found = Math.max(found, offset.offset());
            }
        }
        return found;
    }

    /**
     * The stable committed offsets of many groups in one call (Kafka's admin client asks each coordinator once for
     * all of its groups): for each group, those of the named partitions it holds.
     * <p>
     * Read stable: a partition whose offset a transaction still open holds pending is left out of the admin client's
     * answer (it logs "Skipping return offset ... due to error UNSTABLE_OFFSET_COMMIT"), which would read as no
     * position at all, and a task would then write again what that transaction commits. Such partitions are asked
     * again, every {@value #UNSTABLE_PAUSE_MS} ms, until the transaction has ended (committed, or aborted by a fencing
     * producer or its timeout), for at most {@value #ASK_SECONDS} s.
     */
    static Map<String, Map<TopicPartition, OffsetAndMetadata>> committedAll(
            Map<String, Object> settings, Map<String, List<TopicPartition>> asked)
            throws InterruptedException, ExecutionException, TimeoutException {
        Admin admin = ADMINS.computeIfAbsent(settings, Producers::admin);
        Map<String, Map<TopicPartition, OffsetAndMetadata>> held = new HashMap<>();
        asked.keySet().forEach(group -> held.put(group, new HashMap<>()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ASK_SECONDS);
        Map<String, List<TopicPartition>> open = asked;
        for (;;) {
            Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
            open.forEach((group, keys) -> specs.put(group, new ListConsumerGroupOffsetsSpec().topicPartitions(keys)));
            ListConsumerGroupOffsetsResult result = admin.listConsumerGroupOffsets(
                specs, new ListConsumerGroupOffsetsOptions().requireStable(true));
            Map<String, List<TopicPartition>> unstable = new HashMap<>();
            for (Map.Entry<String, List<TopicPartition>> group : open.entrySet()) {
                Map<TopicPartition, OffsetAndMetadata> answer = result.partitionsToOffsetAndMetadata(group.getKey())
                    .get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                for (TopicPartition key : group.getValue()) {
                    if (!answer.containsKey(key)) {
                        unstable.computeIfAbsent(group.getKey(), name -> new ArrayList<>()).add(key);
                    } else if (answer.get(key) != null) {
                        held.get(group.getKey()).put(key, answer.get(key));
                    }
                }
            }
            if (unstable.isEmpty()) {
                return held;
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("the positions " + unstable + " were still held by an open transaction after "
                    + ASK_SECONDS + " s");
            }
            Thread.sleep(UNSTABLE_PAUSE_MS);
            open = unstable;
        }
    }

    private static Admin admin(Map<String, Object> settings) {
        return Admin.create(AdminSettings.of(settings));
    }
}
