package securemirror.source;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;

/**
 * A task's consumer and the ranges it reads, polled by the task itself or, given a bound, on a thread of its own
 * while the task copies what it returned, so that the next fetch is in flight while the last one is copied.
 *
 * <p>Kafka's consumer (kafka-clients 3.9) fetches no partition of which it still holds records, sends one fetch at a
 * time to a broker, and takes a response in only in a poll that finds nothing left to return; a response names every
 * partition newly asked for, those it had no room for as well. Over more partitions than one response carries whole,
 * a task that asked for all of them at once would alternate between fetching and copying, its connection idle while
 * it copies ({@link #holdBackHalf}), so it asks for half of them first. The thread, where set, moves records out of
 * the consumer as it returns them, so the consumer is empty again as soon as a response has been parsed
 * (benchmarks/NOTES.md section 24).
 *
 * <p>Fetching ahead costs heap and CPU: what the task has not copied yet is held here, up to the bound in keys' and
 * values' bytes as returned (uncompressed) plus one poll, besides the response the consumer holds. Held for seconds,
 * those records outlive young collections; with 100 MiB a task the job on loopback ran at 0.57x the rate of polling
 * itself on a 512 MiB heap, and at 0.73x on 2 GiB. So it is off unless the executor's Spark configuration sets
 * {@value SourceSettings#FETCH_AHEAD}.
 *
 * <p>A range is done when the consumer's position reaches its end, which also covers offsets that hold no record to
 * return (transaction markers, records of aborted transactions under read_committed, compacted-away offsets); a done
 * partition is paused so the consumer fetches nothing past the batch. With a thread, the consumer is the thread's
 * until it ends. {@link #stop} returns whether every range was read, the only case in which the consumer may serve
 * the slot's next task.
 */
final class FetchAhead {
    private static final Duration POLL = Duration.ofMillis(500);

    /** One partition's records of one poll, in offset order, and their keys' and values' bytes. */
    record Polled(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> records, long bytes) {
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final SourceSettings settings;
    private final Map<TopicPartition, Long> open;  // the end of each range not read yet; the thread's alone
    private final long most;
    private final int wholeInResponse;
    private Set<TopicPartition> heldBack = Set.of();  // paused until the first response is in ({@link #holdBackHalf})
    private final ArrayDeque<Polled> queue = new ArrayDeque<>();
    private final Thread thread;
    private long queued;  // bytes in the queue
    private long progressed;  // when a poll last returned records (0: before the first poll)
    private boolean ended;  // the thread has handed over all it will
    private boolean read;  // ... and ended having read every range
    private boolean stopping;
    private Throwable failure;

    /**
     * Reads up to {@code ends} (each partition's range end) with {@code consumer}, already assigned and positioned:
     * on a thread named {@code name} holding up to {@code most} bytes ahead, or, with {@code most} 0, in {@link #take}.
     * Over more partitions than one response carries whole ({@code wholeInResponse}), it asks for half of them first.
     */
    FetchAhead(KafkaConsumer<byte[], byte[]> consumer, SourceSettings settings, Map<TopicPartition, Long> ends,
               int wholeInResponse, long most, String name) {
        this.consumer = consumer;
        this.settings = settings;
        this.open = new HashMap<>(ends);
        this.wholeInResponse = wholeInResponse;
        this.most = most;
        if (most > 0) {
            this.thread = new Thread(this::run, name);
            thread.setDaemon(true);
            thread.start();
        } else {
            this.thread = null;
        }
    }

    /**
     * The next partition's records, in the order polled; null once every range is read. What ended the thread
     * otherwise (a lost record, a timeout, a failed poll) is thrown here, as it was thrown there.
     */
    synchronized Polled take() throws InterruptedException {
        while (thread == null && queue.isEmpty() && !ended) {
            step();  // no thread: the task polls itself, a poll when it has copied the last
        }
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
     * Ends the thread, waking it from a poll if it still runs, and waits for it. True when every range had been read
     * (the thread, if any, ended before): the consumer is then positioned at the ranges' ends with no wakeup pending.
     */
    boolean stop() {
        if (thread == null) {
            synchronized (this) {
                return read;
            }
        }
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
            while (!ended()) {
                step();
            }
        } catch (WakeupException | InterruptException | Stopped stopped) {
            end(null, false);
        } catch (Throwable failed) {
            end(failed, false);
        }
    }

    private synchronized boolean ended() {
        return ended;
    }

    /** One poll: its records handed over and the ranges it finished settled; the end once every range is read. */
    private void step() throws InterruptedException {
        if (progressed == 0) {
            settle();  // ranges that start at their end
            progressed = System.currentTimeMillis();
            if (open.size() > wholeInResponse) {
                holdBackHalf();
            }
        }
        if (!open.isEmpty()) {
            ConsumerRecords<byte[], byte[]> polled = Reads.poll(consumer, POLL, settings);
            if (!polled.isEmpty()) {
                for (TopicPartition tp : polled.partitions()) {
                    hand(tp, polled.records(tp));
                }
                progressed = System.currentTimeMillis();  // after the hand-over: a slow copy is no timeout
            } else if (System.currentTimeMillis() - progressed > settings.pollTimeoutMs) {
                // a timeout (Kafka's retriable kind): the source's brokers away, not records gone; the task is retried
                throw new TimeoutException("the mirror source read nothing from " + open.keySet() + " for "
                    + settings.pollTimeoutMs + " ms, below the ends the batch was planned with");
            }
            settle();
            if (!heldBack.isEmpty() && (!polled.isEmpty() || heldBack.containsAll(open.keySet()))) {
                consumer.resume(heldBack);  // the first response is in: asked for while it is copied
                heldBack = Set.of();
            }
        }
        if (open.isEmpty()) {
            end(null, true);
        }
    }

    /**
     * Pauses every other open partition until the first response is in. Kafka's consumer holds every partition a
     * response names until the task has copied all that it brought. A first fetch for all of a task's partitions, when
     * one response cannot carry them all, is answered with every one of them named, those it had no room for without
     * records, so nothing is left to fetch while the task copies it but the partition first copied to its end, before
     * it is paused. That fetch goes out alone, drops the others from the broker's fetch session and holds the broker's
     * one fetch until the copy is done (its response is taken in only then); the next fetch asks for the rest anew, is
     * answered with all of them named again, and the task alternates between fetching and copying. Asked for in two
     * halves, the second half's fetch goes out as the first response is handed over and is on its way while that is
     * copied; from then on, each half's leftovers are asked for as the other half's response is handed over.
     */
    private void holdBackHalf() {
        List<TopicPartition> sorted = new ArrayList<>(open.keySet());
        sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<TopicPartition> half = new ArrayList<>();
        for (int i = 1; i < sorted.size(); i += 2) {
            half.add(sorted.get(i));  // alternate partitions, so that each broker's share is halved too
        }
        consumer.pause(half);
        heldBack = new HashSet<>(half);
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

    private synchronized void hand(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> records)
            throws InterruptedException {
        long bytes = 0;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            bytes += Math.max(0, record.serializedKeySize()) + Math.max(0, record.serializedValueSize());
        }
        while (thread != null && !stopping && !queue.isEmpty() && queued + bytes > most) {
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
