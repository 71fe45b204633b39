package securemirror.metrics;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The mirror job's figures where dashboards look, fed by the job's driver once per batch (or continuous epoch), and
 * with the consumer groups' checkpoints the launcher's group sync wrote ({@link #checkpoints}):
 * MirrorMaker 2's MBeans on the JVM's platform MBean server ({@link Names#objectName}: JMX, the Prometheus JMX
 * exporter, Kafka's JmxTool) and a source of Spark's metrics system ({@link SparkMetricsSource}: Spark's JmxSink,
 * PrometheusServlet, ...). The figures are the ones the mirror's sink reported for the batch, which the job's monitor
 * also writes to its metrics file. Publishing never fails the caller: {@link #update} says what went wrong instead.
 */
public final class MirrorMetrics {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<Names, PartitionFigures> PARTITIONS = new HashMap<>();
    private static final Map<Names, CheckpointFigures> CHECKPOINTS = new HashMap<>();
    private static TaskFigures task;
    private static SparkMetricsSource spark;
    private static String sparkProblem;

    private MirrorMetrics() {
    }

    /**
     * Adds one batch's figures: {@code {"source": <alias>, "target": <alias>, "partitions": [{"topic": <target
     * topic>, "partition": <n>, "record-count": <n>, "byte-count": <n>, "record-age-ms-min": <ms>, ...-avg, ...-max,
     * "replication-latency-ms-min": <ms>, ...-avg, ...-max}, ...]}} (the ages and latencies may be left out).
     *
     * @return null when every figure was published, or one sentence saying what could not be
     */
    public static synchronized String update(String json) {
        JsonNode batch;
        try {
            batch = JSON.readTree(json);
        } catch (JsonProcessingException error) {
            return "the batch's figures were not read: " + error.getOriginalMessage();
        }
        long now = System.currentTimeMillis();
        String problem = null;
        for (JsonNode row : batch.path("partitions")) {
            try {
                problem = first(problem, add(batch, row, now));
            } catch (RuntimeException error) {
                problem = first(problem, "a partition's figures were not published: " + error.getMessage());
            }
        }
        return first(problem, sparkProblem);
    }

    /**
     * Adds one group sync pass's checkpoints, as MirrorMaker 2's {@code MirrorCheckpointConnector} figures: {@code
     * {"source": <alias>, "target": <alias>, "time": <ms since the epoch the pass wrote them>, "figures": [{"group":
     * <group>, "topic": <target topic>, "partition": <n>, "checkpoint-latency-ms": <ms>}, ...]}}.
     *
     * @return null when every figure was published, or one sentence saying what could not be
     */
    public static synchronized String checkpoints(String json) {
        JsonNode pass;
        try {
            pass = JSON.readTree(json);
        } catch (JsonProcessingException error) {
            return "the checkpoints' figures were not read: " + error.getOriginalMessage();
        }
        long time = pass.path("time").asLong(System.currentTimeMillis());
        String problem = null;
        for (JsonNode row : pass.path("figures")) {
            try {
                Names names = new Names(pass.path("source").asText(""), pass.path("target").asText(""),
                    row.path("group").asText(""), row.path("topic").asText(""), row.path("partition").asInt(-1));
                CheckpointFigures figures = CHECKPOINTS.get(names);
                if (figures == null) {
                    figures = new CheckpointFigures();
                    CHECKPOINTS.put(names, figures);
                    problem = first(problem, publish(names.objectName(), names::metric, figures));
                }
                figures.add(time, row.path(CheckpointFigures.LATENCY).asDouble(Double.NaN));
            } catch (RuntimeException error) {
                problem = first(problem, "a checkpoint's figures were not published: " + error.getMessage());
            }
        }
        return first(problem, sparkProblem);
    }

    /**
     * Sets the job's failed task attempts and waits (the driver's ride watch, about once a second): {@code
     * {"task_retries": <n>, "last_error_ms": <ms since the epoch, 0: none>, "waits": <ridden waits>,
     * "waiting_since_ms": <ms since the epoch, or -1 when not waiting>}}, as Kafka Connect's task error metrics of
     * a MirrorMaker 2 task ({@link TaskFigures}).
     *
     * @return null when published, or one sentence saying what could not be
     */
    public static synchronized String task(String json) {
        JsonNode row;
        try {
            row = JSON.readTree(json);
        } catch (JsonProcessingException error) {
            return "the task's figures were not read: " + error.getOriginalMessage();
        }
        String problem = null;
        if (task == null) {
            task = new TaskFigures();
            try {
                problem = publish(new ObjectName(TaskFigures.OBJECT_NAME), TaskFigures::metric, task);
            } catch (javax.management.MalformedObjectNameException error) {
                problem = "the task's figures were not published: " + error.getMessage();
            }
        }
        task.set(row.path("task_retries").asLong(0), row.path("last_error_ms").asLong(0), row.path("waits").asLong(0),
            row.path("waiting_since_ms").asLong(-1));
        return first(problem, sparkProblem);
    }

    /** The object names of the MBeans published so far (for the job's tests and logs). */
    public static synchronized String[] objectNames() {
        return Stream.concat(Stream.concat(PARTITIONS.keySet().stream(), CHECKPOINTS.keySet().stream())
            .map(names -> names.objectName().toString()), Stream.ofNullable(task).map(figures -> TaskFigures.OBJECT_NAME))
            .sorted().toArray(String[]::new);
    }

    private static String add(JsonNode batch, JsonNode row, long now) {
        Names names = new Names(batch.path("source").asText(""), batch.path("target").asText(""),
            row.path("topic").asText(""), row.path("partition").asInt(-1));
        PartitionFigures figures = PARTITIONS.get(names);
        String problem = null;
        if (figures == null) {
            figures = new PartitionFigures(now);
            PARTITIONS.put(names, figures);
            problem = publish(names.objectName(), names::metric, figures);
        }
        figures.add(now, row.path("record-count").asLong(0), row.path("byte-count").asLong(0),
            spread(row, PartitionFigures.AGE), spread(row, PartitionFigures.LATENCY));
        return problem;
    }

    private static String publish(ObjectName name, java.util.function.UnaryOperator<String> metric, Figures figures) {
        String problem = null;
        try {
            if (spark == null && sparkProblem == null) {
                SparkMetricsSource source = new SparkMetricsSource();
                if (source.register()) {
                    spark = source;
                }
            }
            if (spark != null) {
                spark.add(metric, figures);
            }
        } catch (RuntimeException | LinkageError error) {
            sparkProblem = "Spark's metrics system refused the figures: " + error;
        }
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(new PartitionMBean(figures), name);
        } catch (JMException | RuntimeException error) {
            problem = "the JMX MBean " + name + " was not registered: " + error;
        }
        return problem;
    }

    private static PartitionFigures.Spread spread(JsonNode row, String figure) {
        JsonNode min = row.get(figure + "-min"), avg = row.get(figure + "-avg"), max = row.get(figure + "-max");
        if (min == null || avg == null || max == null || !min.isNumber() || !avg.isNumber() || !max.isNumber()) {
            return PartitionFigures.Spread.NONE;
        }
        return new PartitionFigures.Spread(min.asDouble(), avg.asDouble(), max.asDouble());
    }

    private static String first(String problem, String another) {
        return problem != null ? problem : another;
    }
}
