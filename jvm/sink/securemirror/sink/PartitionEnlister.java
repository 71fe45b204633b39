package securemirror.sink;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.function.Consumer;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * The one reach into Kafka's producer: adding partitions to its open transaction before any record goes to them.
 * <p>
 * Why: Kafka's producer (the 3.9 client Spark ships) adds a partition to its transaction when the partition's first
 * record is sent, with an AddPartitionsToTxn round trip to the transaction coordinator per new partition, and its
 * sender sends no records meanwhile. A task meeting hundreds of partitions one after the other then spends most of
 * its time in those round trips; enlisted together beforehand, they go in one. The client has no public call for it:
 * its transaction manager's {@code maybeAddPartition} (public, in an internal package) is reached through the
 * producer's private {@code transactionManager} field.
 * <p>
 * Resolved once per JVM against the client on the class path ({@link #CLIENT}). Where it does not resolve (another
 * client), that is said once, at WARN naming the client's version, and {@link #enlist} does nothing: each partition is added as its first record
 * is sent, as the client does by itself. tests/unit/test_sink_enlist.py resolves it against the job's kafka-clients.
 */
final class PartitionEnlister {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PartitionEnlister.class);
    /** Resolved against the Kafka client this JVM runs. */
    static final PartitionEnlister CLIENT = resolve(KafkaProducer.class, LOG::warn);

    private final Field manager;  // null: unresolved
    private final Method add;

    private PartitionEnlister(Field manager, Method add) {
        this.manager = manager;
        this.add = add;
    }

    /** The enlister of a producer class; where it has no transaction manager to reach, {@code warn} hears why. */
    static PartitionEnlister resolve(Class<?> producer, Consumer<String> warn) {
        try {
            Field manager = producer.getDeclaredField("transactionManager");
            manager.setAccessible(true);
            return new PartitionEnlister(manager, manager.getType().getMethod("maybeAddPartition", TopicPartition.class));
        } catch (ReflectiveOperationException | RuntimeException missing) {
            warn.accept("secure-mirror sink: this Kafka client (kafka-clients " + AppInfoParser.getVersion()
                + ") has no transaction manager to enlist partitions with (" + missing + "); a transaction adds each "
                + "partition when its first record is sent, with a round trip to the transaction coordinator each");
            return new PartitionEnlister(null, null);
        }
    }

    /** Whether {@link #enlist} reaches the producer's transaction manager. */
    boolean resolved() {
        return manager != null;
    }

    /**
     * Adds partitions to the producer's open transaction (where unresolved: nothing, they are added as records come).
     * Kafka's own exceptions (a producer not in a transaction, fenced or failed) are thrown as they are.
     */
    void enlist(KafkaProducer<?, ?> producer, Iterable<TopicPartition> partitions) throws ReflectiveOperationException {
        if (manager == null) {
            return;
        }
        Object transactions = manager.get(producer);
        // Under the manager's own lock (maybeAddPartition holds it too, re-entered here): its sender drains the new
        // partitions into an AddPartitionsToTxn in nextRequest, which takes it, so it sends them all in one request.
        // Unlocked, a sender awake meanwhile sent the first partition alone and the rest after its round trip (a live
        // run on the sandbox did: tests/integration/test_enlist_live.py reads the coordinator's transaction log).
        try {
            synchronized (transactions) {
                for (TopicPartition partition : partitions) {
                    add.invoke(transactions, partition);
                }
            }
        } catch (InvocationTargetException thrown) {
            if (thrown.getCause() instanceof RuntimeException kafka) {
                throw kafka;
            }
            throw thrown;
        }
    }
}
