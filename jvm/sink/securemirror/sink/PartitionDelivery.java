package securemirror.sink;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * exactly_once with a transactional producer per source partition ({@code mirror.producer-per: partition}, for
 * Spark's Kafka source, whose tasks are one per partition). Per lane: the transactional id is derived from the
 * profile and the source partition ({@link SinkSettings#transactionalId}), so {@code initTransactions} fences any
 * older task with the same id and aborts what it left open; then the lane reads the next source offset the target
 * already holds (committed with the records, in the consumer group of the same name) and skips rows before it; at
 * commit it sends the new position and its offset map segments into the transaction and commits records, map and
 * position together. A producer whose lane committed waits for the next batch's task of the same source partition
 * on this executor ({@link Producers.Idle}), which skips {@code initTransactions} and the position read.
 */
final class PartitionDelivery implements Delivery {
    private final SinkSettings settings;
    private final TaskClient client;
    private final Collection<Lane> lanes;
    private final Map<Lane, Transaction> transactions = new HashMap<>();

    /** A lane's transaction: its id (and group), and whether it committed. */
    private static final class Transaction {
        final String transactionalId;
        boolean done;

        Transaction(String transactionalId) {
            this.transactionalId = transactionalId;
        }
    }

    PartitionDelivery(SinkSettings settings, TaskClient client, Collection<Lane> lanes) {
        this.settings = settings;
        this.client = client;
        this.lanes = lanes;
    }

    @Override
    public void open(Lane lane) throws IOException {
        Transaction transaction = new Transaction(settings.transactionalId(lane.topic, lane.partition));
        lane.producer = begin(lane, transaction.transactionalId);
        transactions.put(lane, transaction);
    }

    /** The lane's producer with its transaction begun: the idle one of its id, else a new one (fencing older ones). */
    private KafkaProducer<byte[], byte[]> begin(Lane lane, String transactionalId) throws IOException {
        Producers.Idle idle = Producers.takeIdle(client.settings(), transactionalId);
        if (idle != null) {
            try {
                idle.producer().beginTransaction();
                lane.committed = idle.next();
                return idle.producer();
            } catch (RuntimeException unusable) {
                idle.producer().close(Duration.ZERO);  // start afresh below
            }
        }
        KafkaProducer<byte[], byte[]> own = Producers.transactional(client.settings(), transactionalId);
        String name = lane.topic + "-" + lane.partition;
        try {
            own.initTransactions();
            lane.committed = Producers.committed(client.settings(), transactionalId, position(lane));
            own.beginTransaction();
        } catch (InterruptedException error) {
            own.close(Duration.ZERO);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the transaction of " + name, error);
        } catch (Exception error) {
            own.close(Duration.ZERO);
            throw new IOException("could not start the transaction of " + name + ": " + error, error);
        }
        return own;
    }

    /** Where a lane's source position is kept on the target: partition 0 of its target topic, in its group. */
    private static TopicPartition position(Lane lane) {
        return new TopicPartition(lane.target, 0);
    }

    @Override
    public void commit() throws IOException {
        for (Lane lane : lanes) {
            commit(lane, transactions.get(lane));
        }
    }

    private void commit(Lane lane, Transaction transaction) throws IOException {
        KafkaProducer<byte[], byte[]> producer = lane.producer;
        producer.flush();
        lane.check();
        lane.sendMap(producer, null);  // in the transaction: a failed send fails its commit
        if (lane.figures.records > 0) {
            Map<TopicPartition, OffsetAndMetadata> next = Map.of(position(lane),
                new OffsetAndMetadata(lane.next(), "source " + lane.topic + "-" + lane.partition));
            producer.sendOffsetsToTransaction(next, new ConsumerGroupMetadata(transaction.transactionalId));
        }
        producer.commitTransaction();
        transaction.done = true;
    }

    @Override
    public void abort() {
        for (Lane lane : lanes) {
            try {
                lane.producer.abortTransaction();
            } catch (RuntimeException ignored) {
                // fenced or broken: closing is all that is left, and a newer task aborts what this one left open
            }
        }
    }

    /** A lane's producer that committed waits for the next batch's task, with its position; otherwise it closes. */
    @Override
    public void close() {
        for (Lane lane : lanes) {
            Transaction transaction = transactions.get(lane);
            if (transaction.done) {
                long next = lane.figures.records > 0 ? lane.next() : lane.committed;
                Producers.keepIdle(client.settings(), transaction.transactionalId,
                                   new Producers.Idle(lane.producer, next));
            } else {
                lane.producer.close(Duration.ofSeconds(5));
            }
        }
    }
}
