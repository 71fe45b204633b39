package securemirror.sink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.TaskContext;

/**
 * exactly_once with one transactional producer per write task ({@code mirror.producer-per: task}): every lane sends
 * through the task's {@link TaskTransaction}, begun when the task meets its first lane (reading the positions the
 * target holds for the partitions its source reader was planned to read, {@link TaskPlan}, then enlisting them at
 * once), and starts from the position the target holds for it. The task's records, its lanes' offset map segments
 * and their positions commit in one transaction: at the end of the task, and mid-way whenever the transaction has
 * been open for a third of its timeout ({@link TaskTransaction#due}).
 */
final class TaskDelivery implements Delivery {
    private final SinkSettings settings;
    private final TaskClient client;
    private final int slot;
    private final Map<String, Lane> lanes;
    /** Per lane, the next source offset sent with a commit of this task so far. */
    private final Map<Lane, Long> positionSent = new HashMap<>();
    private TaskTransaction task;  // begun with the first lane

    TaskDelivery(SinkSettings settings, TaskClient client, int slot, Map<String, Lane> lanes) {
        this.settings = settings;
        this.client = client;
        this.slot = slot;
        this.lanes = lanes;
    }

    private TaskTransaction task() throws IOException {
        if (task == null) {
            task = new TaskTransaction(settings, client.settings(), slot);
            TaskContext context = TaskContext.get();
            if (context != null) {
                task.prepare(TaskPlan.take(context.taskAttemptId()));
            }
        }
        return task;
    }

    @Override
    public void open(Lane lane) throws IOException {
        lane.producer = task().producer;
        lane.committed = task.position(lane.topic, lane.partition, lane.kept);
    }

    /** The task's transaction has been open for long (see TaskTransaction.commitEveryMs): commit, begin the next. */
    @Override
    public void sent(Lane lane, long now) throws IOException {
        if (task.due(now)) {
            List<TaskTransaction.Written> written = writtenSinceCommit();
            task.commitAndBegin(written, lanes.keySet(), Lane.key(lane.topic, lane.partition));
        }
    }

    @Override
    public void commit() throws IOException {
        if (task != null) {
            task.commit(writtenSinceCommit());
        }
    }

    /**
     * Flushes, sends the map segments into the transaction (a failed send fails its commit), and returns the positions
     * of the lanes that wrote since the last commit, for the commit to send with the records.
     */
    private List<TaskTransaction.Written> writtenSinceCommit() throws IOException {
        task.producer.flush();
        List<TaskTransaction.Written> written = new ArrayList<>();
        for (Lane lane : lanes.values()) {
            task.check(lane);
            long next = lane.next();
            if (next > positionSent.getOrDefault(lane, -1L)) {
                written.add(new TaskTransaction.Written(lane.topic, lane.partition, lane.target, lane.kept, next));
                positionSent.put(lane, next);
            }
        }
        for (Lane lane : lanes.values()) {
            lane.sendMap(task.producer, null);
        }
        return written;
    }

    @Override
    public void abort() {
        if (task != null) {
            task.abort();
        }
    }

    @Override
    public void close() {
        if (task != null) {
            task.close();
        }
    }
}
