package securemirror.sink;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;

/**
 * exactly_once with one transactional producer per write task ({@code mirror.producer-per: task}), for a source
 * whose task {@code i} reads the same source partitions in every batch of a query (the mirror's own source: a
 * partition always goes to the same slot). The transactional id is the task's ({@link SinkSettings#taskTransactionalId}),
 * so {@code initTransactions} fences an older attempt of the same task and aborts what it left open; all the task's
 * records and all its partitions' positions go in one transaction.
 * <p>
 * Where a partition's position lives: for a topic whose partitions are kept, as the offset of the same partition of
 * its target topic in the topic's position group ({@link SinkSettings#positionGroup}): one group per topic, committed
 * with one request per topic and batch; otherwise in the partition's own group, as with a producer per partition.
 * A position is read from both places, stable, and the larger is taken (it only moves forward), so a checkpoint
 * written by a producer per partition resumes here without a record twice.
 * <p>
 * After a commit the producer waits with the positions it committed for the slot's next task on this executor
 * (no {@code initTransactions}, no reads). If another executor took the id in between, the broker has fenced it: the
 * task's writes fail, nothing becomes visible, and the retry starts afresh.
 */
final class TaskTransaction {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TaskTransaction.class);

    private final SinkSettings settings;
    private final Map<String, Object> client;
    private final String transactionalId;
    private final Map<String, Long> known;
    /** Positions read for this task, -1 for none, by {@link Lane#key} (not carried to the slot's next task: {@link
     * #known} is). */
    private final Map<String, Long> read = new HashMap<>();
    final KafkaProducer<byte[], byte[]> producer;
    /**
     * How long a transaction stays open before the task commits what it wrote so far and begins the next: a third of
     * the producer's {@code transaction.timeout.ms} (20 s by default). A task over a large backlog would otherwise
     * outlive its transaction, which the coordinator then aborts, fencing the producer and failing the task.
     */
    private final long commitEveryMs;
    /** When the open transaction began at the coordinator: at its first partitions, enlisted after the reads. */
    private long begun = System.currentTimeMillis();
    private Map<String, List<Integer>> planned = Map.of();
    private boolean done;

    TaskTransaction(SinkSettings settings, Map<String, Object> client, int slot) throws IOException {
        this.settings = settings;
        this.client = client;
        this.transactionalId = settings.taskTransactionalId(slot);
        Producers.IdleTask idle = Producers.takeIdleTask(client, transactionalId);
        KafkaProducer<byte[], byte[]> kept = idle == null ? null : resumed(idle.producer());
        this.known = kept == null ? new HashMap<>() : new HashMap<>(idle.next());
        this.producer = kept != null ? kept : started(Producers.transactional(client, transactionalId), slot);
        this.commitEveryMs = Math.max(1000L, timeoutMs(client) / 3);
    }

    private static long timeoutMs(Map<String, Object> client) {
        Object set = client.get("transaction.timeout.ms");
        try {
            return set == null ? 60_000L : Long.parseLong(set.toString().trim());
        } catch (NumberFormatException unreadable) {
            return 60_000L;  // the producer itself refuses it when it starts
        }
    }

    /** Whether the open transaction is due to be committed (see {@link #commitEveryMs}). */
    boolean due(long now) {
        return now - begun >= commitEveryMs;
    }

    /** An idle producer's next transaction, or null when it cannot begin one (then the task starts afresh). */
    private static KafkaProducer<byte[], byte[]> resumed(KafkaProducer<byte[], byte[]> idle) {
        try {
            idle.beginTransaction();
            return idle;
        } catch (RuntimeException unusable) {
            idle.close(Duration.ZERO);
            return null;
        }
    }

    /** A new producer: {@code initTransactions} fences older ones with its id and aborts what they left open. */
    private static KafkaProducer<byte[], byte[]> started(KafkaProducer<byte[], byte[]> own, int slot) throws IOException {
        try {
            own.initTransactions();
            own.beginTransaction();
            return own;
        } catch (RuntimeException error) {
            own.close(Duration.ZERO);
            throw new IOException("could not start the transaction of task " + slot + ": " + error, error);
        }
    }

    /**
     * Prepares the task's transaction for what its source reader was planned to read ({@link TaskPlan}): first reads
     * the positions the task lacks ({@link #readAhead}), then adds to the transaction, before any record goes to them,
     * the target partitions of the kept topics it will write, in one round trip instead of one per partition as
     * records arrive ({@link PartitionEnlister}: why, and the fallback where the client has no way to). A partition
     * enlisted and then not written (every row skipped) gets a commit marker and nothing else.
     * <p>
     * In that order because the transaction's timeout runs at the coordinator from the first partition added: a
     * position read may wait (while another transaction holds the position pending, {@link Producers#committedAll}),
     * and inside the transaction such a wait could outlast it: the coordinator would abort it and bump the producer's
     * epoch, and the task's sends would fail with "Producer attempted to produce with an old epoch".
     */
    void prepare(Map<String, List<Integer>> planned) {
        this.planned = planned;
        readAhead();
        enlist(lane -> true);
        begun = System.currentTimeMillis();
    }

    /** Enlists the planned partitions that {@code still} accepts (by {@link Lane#key}). */
    private void enlist(Predicate<String> still) {
        if (!PartitionEnlister.CLIENT.resolved() || planned.isEmpty()) {
            return;
        }
        try {
            PartitionEnlister.CLIENT.enlist(producer, plannedTargets(still));
        } catch (ReflectiveOperationException | RuntimeException error) {
            LOG.info("secure-mirror sink: could not enlist the task's partitions in its transaction at once ({}); "
                + "they are added as records arrive", error.toString());
        }
    }

    /** The target partitions of the planned kept topics' partitions that {@code still} accepts. */
    private List<TopicPartition> plannedTargets(Predicate<String> still) {
        List<TopicPartition> targets = new ArrayList<>();
        for (Map.Entry<String, List<Integer>> topic : planned.entrySet()) {
            if (!settings.kept.contains(topic.getKey())) {
                continue;  // the producer's partitioner chooses the target partition
            }
            String target = settings.targetTopic(topic.getKey());
            int partitions = producer.partitionsFor(target).size();
            for (int partition : topic.getValue()) {
                if (partition < partitions && still.test(Lane.key(topic.getKey(), partition))) {
                    targets.add(new TopicPartition(target, partition));
                }
            }
        }
        return targets;
    }

    /** Where a lane's position is committed: group and key. */
    private Map.Entry<String, TopicPartition> place(String topic, int partition, String target, boolean kept) {
        return kept ? Map.entry(settings.positionGroup(topic), new TopicPartition(target, partition))
                    : Map.entry(settings.transactionalId(topic, partition), new TopicPartition(target, 0));
    }

    /**
     * The next source offset the target holds for a source partition, or -1: as committed by this task's producer,
     * else as read ahead ({@link #readAhead}), else read now: for a kept topic, every partition of its target topic
     * in one call (a task with no plan meeting thousands of partitions asks once per topic, not once per partition).
     */
    long position(String topic, int partition, boolean kept) throws IOException {
        String key = Lane.key(topic, partition);
        Long mine = known.containsKey(key) ? known.get(key) : read.get(key);
        if (mine != null) {
            return mine;
        }
        try {
            int partitions = kept ? producer.partitionsFor(settings.targetTopic(topic)).size() : 0;
            List<Integer> asked = new ArrayList<>(List.of(partition));
            for (int each = 0; kept && each < partitions; each++) {
                if (each != partition) {
                    asked.add(each);
                }
            }
            readPositions(Map.of(topic, asked));
            return read.get(key);
        } catch (InterruptedException error) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the position of " + topic + "-" + partition, error);
        } catch (Exception error) {
            throw new IOException("could not read the position of " + topic + "-" + partition + ": " + error, error);
        }
    }

    /**
     * Reads into {@link #read} the positions of the given partitions of source topics, in one call. Where a position
     * lives ({@link #place}): a kept topic's in its position group, and in each partition's own group where a producer
     * per partition wrote it before; the larger is taken, as a position only moves forward (so a checkpoint written
     * with a producer per partition resumes here without a record twice). A task reading ahead asks only for its own
     * partitions, so it never waits on a position that another task's transaction holds pending for a moment.
     */
    private void readPositions(Map<String, List<Integer>> topics) throws Exception {
        Map<String, List<TopicPartition>> asked = new HashMap<>();
        topics.forEach((topic, partitions) -> {
            String target = settings.targetTopic(topic);
            TopicPartition own = new TopicPartition(target, 0);
            List<TopicPartition> keys = new ArrayList<>();
            for (int partition : partitions) {
                keys.add(new TopicPartition(target, partition));
                asked.put(settings.transactionalId(topic, partition), List.of(own));
            }
            if (settings.kept.contains(topic)) {
                asked.put(settings.positionGroup(topic), keys);
            }
        });
        Map<String, Map<TopicPartition, OffsetAndMetadata>> held = Producers.committedAll(client, asked);
        topics.forEach((topic, partitions) -> {
            String target = settings.targetTopic(topic);
            TopicPartition own = new TopicPartition(target, 0);
            Map<TopicPartition, OffsetAndMetadata> group = held.getOrDefault(settings.positionGroup(topic), Map.of());
            for (int partition : partitions) {
                long position = -1;
                OffsetAndMetadata inGroup = group.get(new TopicPartition(target, partition));
                if (inGroup != null) {
                    position = inGroup.offset();
                }
                OffsetAndMetadata inOwn = held.get(settings.transactionalId(topic, partition)).get(own);
                if (inOwn != null) {
                    position = Math.max(position, inOwn.offset());
                }
                read.put(Lane.key(topic, partition), position);
            }
        });
    }

    /**
     * Reads at once, before the transaction begins ({@link #prepare}), the positions of every planned partition this
     * task holds none for yet (a new producer: all of them), with one call instead of one per topic or partition as
     * its first record comes: with hundreds of topics, one call instead of hundreds. If that call fails, each
     * partition's first record reads them ({@link #position}) and says why.
     */
    void readAhead() {
        Map<String, List<Integer>> lacking = new HashMap<>();
        planned.forEach((topic, partitions) -> {
            List<Integer> unknown = partitions.stream()
                .filter(p -> !known.containsKey(Lane.key(topic, p)) && !read.containsKey(Lane.key(topic, p))).toList();
            if (!unknown.isEmpty()) {
                lacking.put(topic, unknown);
            }
        });
        if (lacking.isEmpty()) {
            return;
        }
        try {
            readPositions(lacking);
        } catch (InterruptedException error) {
            Thread.currentThread().interrupt();
        } catch (Exception error) {
            LOG.info("secure-mirror sink: reading the positions of {} topics at once failed ({}); each partition's "
                + "first record reads them", lacking.size(), error.toString());
        }
    }

    /**
     * Fails with the lane's first failed send; when its producer was fenced, the message says how long the transaction
     * had been open against its timeout (the coordinator aborts a transaction open longer, bumping the producer's
     * epoch) so a log tells that apart from another producer taking the task's transactional id.
     */
    void check(Lane lane) throws IOException {
        try {
            lane.check();
        } catch (IOException failed) {
            if (failed.getCause() instanceof InvalidProducerEpochException
                    || failed.getCause() instanceof ProducerFencedException) {
                throw new IOException(failed.getMessage() + " (the transaction of " + transactionalId + " had been open "
                    + (System.currentTimeMillis() - begun) + " ms; its timeout is " + timeoutMs(client) + " ms)", failed);
            }
            throw failed;
        }
    }

    /** One lane's outcome for the commit: its next source offset, if it wrote records. */
    record Written(String topic, int partition, String target, boolean kept, long next) {
    }

    /** Sends every written lane's position into the transaction (one request per group), then commits. */
    void commit(Iterable<Written> lanes) {
        commitPositions(lanes);
        done = true;
    }

    /**
     * Commits what the task wrote so far (records and positions together, as at the end: a retry or a replay skips
     * them) and begins the next transaction, enlisting again the planned partitions the task has not finished:
     * those it has not met yet ({@code met} does not hold them) and {@code current}, the one it is writing.
     */
    void commitAndBegin(Iterable<Written> lanes, Set<String> met, String current) {
        commitPositions(lanes);
        producer.beginTransaction();
        begun = System.currentTimeMillis();
        enlist(lane -> lane.equals(current) || !met.contains(lane));
    }

    private void commitPositions(Iterable<Written> lanes) {
        Map<String, Map<TopicPartition, OffsetAndMetadata>> positions = new HashMap<>();
        for (Written lane : lanes) {
            Map.Entry<String, TopicPartition> at = place(lane.topic(), lane.partition(), lane.target(), lane.kept());
            positions.computeIfAbsent(at.getKey(), group -> new HashMap<>()).put(at.getValue(),
                new OffsetAndMetadata(lane.next(), "source " + lane.topic() + "-" + lane.partition()));
            known.put(Lane.key(lane.topic(), lane.partition()), lane.next());
        }
        positions.forEach((group, offsets) ->
            producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(group)));
        producer.commitTransaction();
    }

    void abort() {
        try {
            producer.abortTransaction();
        } catch (RuntimeException ignored) {
            // fenced or broken: closing is all that is left, and a newer task aborts what this one left open
        }
    }

    /** After commit: the producer waits for the slot's next task; otherwise it is closed. */
    void close() {
        if (done) {
            Producers.keepIdleTask(client, transactionalId, new Producers.IdleTask(producer, Map.copyOf(known)));
        } else {
            producer.close(Duration.ofSeconds(5));
        }
    }
}
