package securemirror.source;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;

import securemirror.ride.Backoff;

/** Sent to each executor with the settings; makes one reader per task. */
final class SliceReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;
    private final SourceSettings settings;

    SliceReaderFactory(SourceSettings settings) {
        this.settings = settings;
    }

    /**
     * A task's reader. A retried task (its earlier attempt failed: a broker away, a leader moving, a transaction the
     * coordinator aborted) first pauses, one second doubling up to thirty ({@link Backoff}), so that Spark's task
     * retries ride through a cluster's bad minutes instead of spending themselves in one; the job's driver decides
     * how long that goes on ({@code mirror.ride_through_seconds}, run/job/ride.py).
     */
    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        TaskContext task = TaskContext.get();
        if (task != null && task.attemptNumber() > 0) {
            try {
                Thread.sleep(Backoff.pauseMs(task.attemptNumber()));
            } catch (InterruptedException error) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("the task was stopped during its pause before a retry", error);
            }
        }
        return new SliceReader(settings, (Slice) partition);
    }

    @Override
    public String toString() {
        return "secure-mirror source reader factory";
    }
}
