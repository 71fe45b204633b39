package securemirror.driver;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

import securemirror.ride.Transient;

/**
 * The job's failed task attempts, as the driver's scheduler saw them end: each with its time, stage, partition and
 * attempt, the class names of its exception's cause chain, whether one of them is a retriable Kafka exception (asked
 * of this JVM's kafka-clients), and its first line. The job's Python side reads them ({@link #since}) and judges
 * them (run/job/ride.py): a transient failure is ridden through by Spark's task retries (the mirror's source pauses
 * each retry, {@code securemirror.source.SliceReaderFactory}), anything else stops the query at once.
 * <p>
 * Plain data, never a setting's value: a task's exception text is Kafka's or Spark's, which print no secrets.
 */
public final class TaskFailures extends SparkListener {
    private static final int KEPT = 200;
    private static final Pattern CAUSE = Pattern.compile("(?m)^(?:Caused by: )?([a-zA-Z_$][\\w$]*(?:\\.[\\w$]+)+)(?::|$)");
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Deque<Map<String, Object>> failures = new ArrayDeque<>();
    private long seen;

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
        if (!(end.reason() instanceof TaskFailedReason failed)) {
            return;
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("time_ms", end.taskInfo().finishTime());
        row.put("stage", end.stageId());
        row.put("partition", end.taskInfo().partitionId());
        row.put("attempt", end.taskInfo().attemptNumber());
        row.put("counts", failed.countTowardsTaskFailures());
        row.put("reason", failed.getClass().getSimpleName());  // ExceptionFailure, ExecutorLostFailure, TaskKilled, ...
        List<String> classes = new ArrayList<>();
        String text;
        if (failed instanceof ExceptionFailure exception) {
            classes.add(exception.className());
            Matcher found = CAUSE.matcher(exception.fullStackTrace() == null ? "" : exception.fullStackTrace());
            while (found.find()) {
                if (!classes.contains(found.group(1)) && found.group(0).startsWith("Caused by")) {
                    classes.add(found.group(1));
                }
            }
            text = exception.className() + ": " + firstLine(exception.description());
            row.put("causes", causeLines(exception.fullStackTrace()));
            row.put("side", side(exception.fullStackTrace()));
        } else {
            text = firstLine(failed.toErrorString());
        }
        row.put("classes", classes);
        row.put("retriable", classes.stream().anyMatch(Transient::retriableClass));
        row.put("message", text.length() > 500 ? text.substring(0, 500) : text);
        synchronized (this) {
            row.put("seq", ++seen);
            failures.addLast(row);
            while (failures.size() > KEPT) {
                failures.removeFirst();
            }
        }
    }

    /** The failures after sequence number {@code after} (of those kept), as a JSON array. */
    public synchronized String since(long after) throws JsonProcessingException {
        List<Map<String, Object>> rows = failures.stream().filter(r -> (long) r.get("seq") > after).toList();
        return JSON.writeValueAsString(rows);
    }

    /** Registers a new listener with the driver's Spark context and returns it. */
    public static TaskFailures register(org.apache.spark.SparkContext context) {
        TaskFailures listener = new TaskFailures();
        context.addSparkListener(listener);
        return listener;
    }

    private static String firstLine(String text) {
        return text == null ? "" : text.lines().findFirst().orElse("").strip();
    }

    private static final Pattern OURS = Pattern.compile("(?m)^\\s+at securemirror\\.(source|sink)\\.");

    /** Which cluster the failing code was talking to: the first of the mirror's own frames (its source reads the
     * source, its sink writes the target), or null. */
    private static String side(String trace) {
        Matcher found = OURS.matcher(trace == null ? "" : trace);
        return found.find() ? (found.group(1).equals("source") ? "source" : "target") : null;
    }

    /** The "Caused by:" lines of a stack trace (the chain's own words, for the judge's refusal patterns). */
    private static List<String> causeLines(String trace) {
        List<String> lines = new ArrayList<>();
        if (trace != null) {
            trace.lines().filter(l -> l.startsWith("Caused by: ")).limit(8)
                .forEach(l -> lines.add(l.length() > 400 ? l.substring(0, 400) : l));
        }
        return lines;
    }
}
