package securemirror.sink;

import java.io.IOException;
import java.util.Map;

/**
 * How one task's records reach the target, chosen once per task from the sink's options ({@link #of}):
 * <ul>
 * <li>{@link SharedDelivery}: at_least_once, through the executor's shared (idempotent) producer;</li>
 * <li>{@link PartitionDelivery}: exactly_once with a transactional producer per source partition
 *     ({@code mirror.producer-per: partition});</li>
 * <li>{@link TaskDelivery}: exactly_once with one transactional producer per write task
 *     ({@code mirror.producer-per: task}, {@link TaskTransaction}).</li>
 * </ul>
 * The writer sends every record itself, through the producer the delivery gave the record's lane; the delivery decides
 * where a lane starts, when and how what was sent becomes visible, and what is kept for the next task.
 */
interface Delivery {
    /**
     * The delivery of a task with these settings. {@code lanes} is the writer's view of the task's lanes so far, by
     * {@link Lane#key}: what {@link #commit}, {@link #abort} and {@link #close} act on.
     */
    static Delivery of(SinkSettings settings, int slot, Map<String, Lane> lanes) {
        TaskClient client = new TaskClient(settings);
        if (settings.producerPerTask) {
            return new TaskDelivery(settings, client, slot, lanes);
        }
        if (settings.exactlyOnce) {
            return new PartitionDelivery(settings, client, lanes.values());
        }
        return new SharedDelivery(settings, client, lanes.values());
    }

    /** A lane the task meets for the first time: sets its producer and the next source offset the target holds. */
    void open(Lane lane) throws IOException;

    /** After a record of {@code lane} was sent at {@code now} (ms): a task's transaction may commit mid-way. */
    default void sent(Lane lane, long now) throws IOException {
    }

    /** Makes everything the task sent visible on the target, or fails. */
    void commit() throws IOException;

    /** The task failed: what it sent must never become visible (exactly_once), or a broken producer goes. */
    void abort();

    /** The task ended: producers that committed wait for the next task; the others are closed. */
    void close();
}
