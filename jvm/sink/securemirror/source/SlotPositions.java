package securemirror.source;

import java.io.IOException;
import java.io.ObjectOutputStream;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;

/**
 * Where a continuous reader stood at one record it handed on: the next offset of each of its slot's partitions. Spark
 * asks for one per record and uses the one before each epoch's marker, so a position is cheap to make (its poll's
 * {@link Poll}, the step of the poll it was in, the record's next offset) and becomes a map only when Spark sends it
 * to the driver or the stream merges it.
 */
final class SlotPositions implements PartitionOffset {
    private static final long serialVersionUID = 1L;

    /**
     * One poll of a reader: the positions before it, then each partition it returned records for in the order they
     * were handed on, with the next offset after its last. A step's entry is written before the records of the next
     * step are handed on (and so before any position made at them is handed to another thread).
     */
    static final class Poll {
        final TopicPartition[] partitions;
        final long[] before;
        final int[] order;
        final long[] ends;

        Poll(TopicPartition[] partitions, long[] before, int steps) {
            this.partitions = partitions;
            this.before = before;
            this.order = new int[steps];
            this.ends = new long[steps];
        }
    }

    private transient Poll poll;
    private transient int step;
    private transient long next;
    private Map<TopicPartition, Long> positions;

    /** At a record of the poll's step {@code step} (-1: before any record of the poll), whose next offset is
     * {@code next}. */
    SlotPositions(Poll poll, int step, long next) {
        this.poll = poll;
        this.step = step;
        this.next = next;
    }

    synchronized Map<TopicPartition, Long> positions() {
        if (positions == null) {
            long[] at = poll.before.clone();
            for (int s = 0; s < step; s++) {
                at[poll.order[s]] = poll.ends[s];
            }
            if (step >= 0) {
                at[poll.order[step]] = next;
            }
            Map<TopicPartition, Long> made = new HashMap<>();
            for (int i = 0; i < at.length; i++) {
                made.put(poll.partitions[i], at[i]);
            }
            positions = made;
            poll = null;
        }
        return positions;
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
        positions();
        out.defaultWriteObject();
    }

    @Override
    public String toString() {
        return "secure-mirror slot positions " + positions();
    }
}
