package securemirror.sink;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The source partitions a Spark task is about to read, by task attempt: the mirror's source notes them when its reader
 * starts, and the sink, which writes the same task's rows (a batch's read and write run in one task, with no shuffle
 * between them), takes them when it begins its transaction, so that an {@code exactly_once} task can enlist every
 * partition it will write at once ({@link TaskTransaction#enlist}) instead of one at a time as records arrive.
 */
public final class TaskPlan {
    private static final Map<Long, Map<String, List<Integer>>> PLANNED = new ConcurrentHashMap<>();

    private TaskPlan() {
    }

    /** The partitions with records to read in this task attempt, by source topic. */
    public static void note(long taskAttempt, Map<String, List<Integer>> partitions) {
        PLANNED.put(taskAttempt, Map.copyOf(partitions));
    }

    /** What the reader of this task attempt noted (taken: asked once), or an empty map. */
    static Map<String, List<Integer>> take(long taskAttempt) {
        Map<String, List<Integer>> planned = PLANNED.remove(taskAttempt);
        return planned == null ? Map.of() : planned;
    }

    /** The reader's task ended: what the sink did not take goes. */
    public static void forget(long taskAttempt) {
        PLANNED.remove(taskAttempt);
    }
}
