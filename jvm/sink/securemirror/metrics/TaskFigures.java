package securemirror.metrics;

import java.util.List;

/**
 * The job's failed task attempts and its waits through a cluster's bad minutes (the driver's ride watch), under the
 * names Kafka Connect gives a MirrorMaker 2 task's errors ({@code ErrorHandlingMetrics}: {@code
 * kafka.connect:type=task-error-metrics,connector=MirrorSourceConnector,task=0}), so that what watches a
 * MirrorMaker 2 task's errors watches the job's too.
 *
 * <p>{@code total-retries}: the task attempts Spark ran again; {@code last-error-timestamp}: when the last of them
 * failed (ms since the epoch, 0 when none). The job neither skips records, logs errors per record nor has a dead
 * letter queue: those attributes are there, as Connect's, and stay 0. Beside them, two of the job's own: {@code
 * waiting-seconds}, how long the current wait has lasted (0 when the job is not waiting), and {@code
 * waits-ridden-total}, the waits that ended with the mirror going on.
 */
final class TaskFigures implements Figures {
    private static final String TYPE = "task-error-metrics";
    /** Connect's object name of the task's error metrics (its JmxReporter's key order). */
    static final String OBJECT_NAME = "kafka.connect:type=" + TYPE + ",connector=MirrorSourceConnector,task=0";
    static final String RETRIES = "total-retries";
    static final String LAST_ERROR = "last-error-timestamp";
    static final String WAITING = "waiting-seconds";
    static final String WAITS = "waits-ridden-total";
    /** Connect's attributes of a task's errors, in its order, then the job's own two. */
    static final List<String> ATTRIBUTES = List.of("total-record-failures", "total-record-errors",
        "total-records-skipped", RETRIES, "total-errors-logged", "deadletterqueue-produce-requests",
        "deadletterqueue-produce-failures", LAST_ERROR, WAITING, WAITS);

    private double retries;
    private double lastError;
    private double waits;
    private long waitingSince = -1;

    /** The driver's figures now: retries and ridden waits so far, the last failure's time, the wait's start or -1. */
    synchronized void set(long taskRetries, long lastErrorMs, long ridden, long waitingSinceMs) {
        retries = taskRetries;
        lastError = lastErrorMs;
        waits = ridden;
        waitingSince = waitingSinceMs;
    }

    /** An attribute's name in the Spark source's registry. */
    static String metric(String attribute) {
        return TYPE + ".connector.MirrorSourceConnector.task.0." + attribute;
    }

    @Override
    public List<String> attributes() {
        return ATTRIBUTES;
    }

    @Override
    public synchronized double value(String attribute, long now) {
        return switch (attribute) {
            case RETRIES -> retries;
            case LAST_ERROR -> lastError;
            case WAITS -> waits;
            case WAITING -> waitingSince < 0 ? 0 : Math.max(0, now - waitingSince) / 1000.0;
            default -> 0;
        };
    }
}
