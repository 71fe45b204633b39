package securemirror.sink;

import java.io.IOException;
import java.util.Collection;

import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * at_least_once: every lane sends through the executor's producer for these settings, shared by its tasks as Spark's
 * Kafka sink does (idempotent as the profile's {@code delivery.enable_idempotence} says). A commit flushes it and
 * fails if any of the task's records failed; then the lanes' offset map segments are sent and acknowledged in turn,
 * before the task reports its commit. Nothing is kept per task, and a replay writes its records again.
 */
final class SharedDelivery implements Delivery {
    private final SinkSettings settings;
    private final TaskClient client;
    private final Collection<Lane> lanes;
    private KafkaProducer<byte[], byte[]> shared;

    SharedDelivery(SinkSettings settings, TaskClient client, Collection<Lane> lanes) {
        this.settings = settings;
        this.client = client;
        this.lanes = lanes;
    }

    @Override
    public void open(Lane lane) {
        if (shared == null) {
            shared = Producers.shared(client.settings());
        }
        lane.producer = shared;
    }

    @Override
    public void commit() throws IOException {
        if (shared == null) {
            return;
        }
        shared.flush();
        for (Lane lane : lanes) {
            lane.check();
        }
        writeMap();
    }

    /** The lanes' map segments, sent once their records are acknowledged, and acknowledged in turn. */
    private void writeMap() throws IOException {
        OffsetMap.Failure failed = new OffsetMap.Failure();
        int sent = 0;
        for (Lane lane : lanes) {
            sent += lane.sendMap(shared, failed);
        }
        if (sent > 0) {
            shared.flush();
            if (failed.first != null) {
                throw new IOException("writing the offset map to " + settings.offsetMapTopic + " failed: "
                                      + failed.first, failed.first);
            }
        }
    }

    /** A failed send may have left the shared producer unusable (a fatal error): the executor forgets it. */
    @Override
    public void abort() {
        if (shared != null && lanes.stream().anyMatch(lane -> lane.failure != null)) {
            Producers.evict(client.settings(), shared);
        }
    }

    @Override
    public void close() {
        // the shared producer stays with the executor
    }
}
