package securemirror.source;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;

/**
 * A task's consumer, polled on a thread of its own while the task copies what it returned, so that the next fetch is
 * in flight while the last one is copied.
 *
 * <p>Kafka's consumer fetches no partition of which it still holds records, and a response names partitions that
 * brought nothing as well: the first response of a fetch session names every partition asked for. Copied straight
 * out of the consumer, a task of many partitions therefore fetched, then copied, and its connection idled while it
 * copied: across a capped link with 1,000 partitions it reached 0.65x of the cap (benchmarks/NOTES.md section 24).
 * This thread moves records out of the consumer as it returns them, so the consumer is empty again as soon as a
 * response has been parsed.
 *
 * <p>What the task has not copied yet is held here, up to {@link #AHEAD_RESPONSES} times {@code fetch.max.bytes}
 * of keys and values as returned (uncompressed, so a response compressed up to that ratio fits whole) plus one
 * poll; the consumer holds at most one response besides. A range is done when the consumer's position reaches its
 * end, which also covers offsets that hold no record to return (transaction markers, records of aborted transactions
 * under read_committed, compacted-away offsets); a done partition is paused so the consumer fetches nothing past the
 * batch.
 *
 * <p>The consumer is this thread's from the start until it ends. {@link #stop} returns whether it ended having read
 * every range, the only case in which the consumer may serve the slot's next task.
 */
final class FetchAhead {
    static final int AHEAD_RESPONSES = 2;
    private static final Duration POLL = Duration.ofMillis(500);

    /** One partition's records of one poll, in offset order, and their keys' and values' bytes. */
    record Polled(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> records, long bytes) {
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final SourceSettings settings;
    private final Map<TopicPartition, Long> open;  // the end of each range not read yet; the thread's alone
    private final long most;
    private final ArrayDeque<Polled> queue = new ArrayDeque<>();
    private final Thread thread;
    private long queued;  // bytes in the queue
    private boolean ended;  // the thread has handed over all it will
    private boolean read;  // ... and ended having read every range
    private boolean stopping;
    private Throwable failure;

    /** Reads up to {@code ends} (each partition's range end) with {@code consumer}, already assigned and positioned. */
    FetchAhead(KafkaConsumer<byte[], byte[]> consumer, SourceSettings settings, Map<TopicPartition, Long> ends,
               long most, String name) {
        this.consumer = consumer;
        this.settings = settings;
        this.open = new HashMap<>(ends);
        this.most = most;
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * The next partition's records, in the order polled; null once every range is read. What ended the thread
     * otherwise (a lost record, a timeout, a failed poll) is thrown here, as it was thrown there.
     */
    synchronized Polled take() throws InterruptedException {
        while (queue.isEmpty() && !ended) {
            wait();
        }
        if (failure instanceof RuntimeException unchecked) {
            throw unchecked;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
        Polled next = queue.poll();
        if (next != null) {
            queued -= next.bytes();
            notifyAll();
        }
        return next;
    }

    /** Bytes waiting to be taken (for a check). */
    synchronized long queued() {
        return queued;
    }

    /**
     * Ends the thread, waking it from a poll if it still runs, and waits for it. True when it had already ended having
     * read every range: the consumer is then positioned at the ranges' ends with no wakeup pending.
     */
    boolean stop() {
        boolean wake;
        synchronized (this) {
            wake = !ended;
            stopping = true;
            notifyAll();
        }
        if (wake) {
            consumer.wakeup();
        }
        boolean interrupted = false;
        for (;;) {
            try {
                thread.join();
                break;
            } catch (InterruptedException again) {
                interrupted = true;  // the task is being killed: still wait, the consumer is the thread's until then
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            return read && !wake;
        }
    }

    private void run() {
        try {
            settle();
            long progressed = System.currentTimeMillis();
            while (!open.isEmpty()) {
                ConsumerRecords<byte[], byte[]> polled = Reads.poll(consumer, POLL, settings);
                if (!polled.isEmpty()) {
                    for (TopicPartition tp : polled.partitions()) {
                        hand(tp, polled.records(tp));
                    }
                    progressed = System.currentTimeMillis();  // after the hand-over: a slow copy is no timeout
                } else if (System.currentTimeMillis() - progressed > settings.pollTimeoutMs) {
                    // a timeout (Kafka's retriable kind): the source's brokers away, not records gone; the task is
                    // retried
                    throw new TimeoutException("the mirror source read nothing from " + open.keySet() + " for "
                        + settings.pollTimeoutMs + " ms, below the ends the batch was planned with");
                }
                settle();
            }
            end(null, true);
        } catch (WakeupException | InterruptException | Stopped stopped) {
            end(null, false);
        } catch (Throwable failed) {
            end(failed, false);
        }
    }

    /** Ranges whose position reached the end: with the record there returned, or none to return. */
    private void settle() {
        open.entrySet().removeIf(range -> {
            if (consumer.position(range.getKey()) >= range.getValue()) {
                consumer.pause(List.of(range.getKey()));
                return true;
            }
            return false;
        });
    }

    private synchronized void hand(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> records) throws InterruptedException {
        long bytes = 0;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            bytes += Math.max(0, record.serializedKeySize()) + Math.max(0, record.serializedValueSize());
        }
        while (!stopping && !queue.isEmpty() && queued + bytes > most) {
            wait();
        }
        if (stopping) {
            throw new Stopped();
        }
        queue.add(new Polled(tp, records, bytes));
        queued += bytes;
        notifyAll();
    }

    private synchronized void end(Throwable failed, boolean all) {
        ended = true;
        read = all;
        failure = stopping ? null : failed;
        notifyAll();
    }

    /** The reader stopped the thread while it waited to hand records over. */
    private static final class Stopped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stopped() {
            super(null, null, false, false);
        }
    }
}
