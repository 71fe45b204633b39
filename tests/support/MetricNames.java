import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.TreeMap;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Prints, one line each, the MBeans under {@code kafka.connect.mirror} after one topic-partition was mirrored and one
 * checkpoint of a group of it written, and Kafka Connect's error metrics of the task after one retry: {@code <domain>:<key properties in their order>}, then {@code <attribute>
 * <type> <value>} lines. With {@code mm2} MirrorMaker 2's own metrics make them (its MirrorSourceMetrics and
 * MirrorCheckpointMetrics, reached by reflection; on the Kafka jars), with {@code ours} the mirror's
 * ({@code securemirror.metrics.MirrorMetrics.update} of the JSON in each further argument, or {@code .checkpoints} of
 * those after {@code checkpoints}, {@code .task} after {@code task}; on pyspark's jars and the sink's classes). tests/unit/run/test_mirror_metrics_jvm.py
 * compares the two.
 */
public class MetricNames {
    public static void main(String[] args) throws Exception {
        if (args[0].equals("mm2")) {
            mm2();
        } else {
            Class<?> metrics = Class.forName("securemirror.metrics.MirrorMetrics");
            String method = "update";
            for (int i = 1; i < args.length; i++) {
                if (args[i].equals("checkpoints") || args[i].equals("task")) {
                    method = args[i];
                    continue;
                }
                Object problem = metrics.getMethod(method, String.class).invoke(null, dated(args[i]));
                System.out.println("problem " + problem);
            }
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Map<String, ObjectName> found = new TreeMap<>();
        for (String pattern : new String[] {"kafka.connect.mirror:*", "kafka.connect:type=task-error-metrics,*"}) {
            for (ObjectName name : server.queryNames(new ObjectName(pattern), null)) {
                found.put(name.getDomain() + ":" + name.getKeyPropertyListString(), name);
            }
        }
        for (Map.Entry<String, ObjectName> entry : found.entrySet()) {
            System.out.println("mbean " + entry.getKey());
            for (MBeanAttributeInfo attribute : server.getMBeanInfo(entry.getValue()).getAttributes()) {
                Object value = server.getAttribute(entry.getValue(), attribute.getName());
                System.out.println("attribute " + attribute.getName() + " " + attribute.getType() + " " + value);
            }
        }
    }

    /**
     * The JSON with each {@code "time": -N} and {@code "waiting_since_ms": -N} (N milliseconds ago) made a time of
     * this JVM's clock: the test cannot know how long this JVM took to start, which on a loaded machine was longer than
     * the window a pass's age is judged in.
     */
    private static String dated(String json) {
        java.util.regex.Matcher ago = java.util.regex.Pattern.compile("\"(time|waiting_since_ms)\": -(\\d+)")
            .matcher(json);
        StringBuilder out = new StringBuilder();
        long now = System.currentTimeMillis();
        while (ago.find()) {
            ago.appendReplacement(out, "\"" + ago.group(1) + "\": " + (now - Long.parseLong(ago.group(2))));
        }
        ago.appendTail(out);
        return out.toString();
    }

    /** MirrorMaker 2's metrics of a task replicating src's orders-0 to tgt, after one record of 100 bytes. */
    private static void mm2() throws Exception {
        Class<?> config = Class.forName("org.apache.kafka.connect.mirror.MirrorSourceTaskConfig");
        Object task = config.getConstructor(Map.class).newInstance(Map.of(
            "name", "MirrorSourceConnector", "connector.class", "MirrorSourceConnector", "source.cluster.alias", "src", "target.cluster.alias", "tgt",
            "task.assigned.partitions", "orders-0"));
        Method make = config.getDeclaredMethod("metrics");
        make.setAccessible(true);
        Object metrics = make.invoke(task);
        Class<?> partition = Class.forName("org.apache.kafka.common.TopicPartition");
        Object remote = partition.getConstructor(String.class, int.class).newInstance("src.orders", 0);
        call(metrics, "countRecord", new Class<?>[] {partition}, remote);
        call(metrics, "recordBytes", new Class<?>[] {partition, long.class}, remote, 100L);
        call(metrics, "recordAge", new Class<?>[] {partition, long.class}, remote, 20L);
        call(metrics, "replicationLatency", new Class<?>[] {partition, long.class}, remote, 30L);
        checkpoint(partition, remote);
        taskErrors();
    }

    /** Kafka Connect's error metrics of MirrorMaker 2's source task 0 (ErrorHandlingMetrics), after one retry. */
    private static void taskErrors() throws Exception {
        Class<?> config = Class.forName("org.apache.kafka.connect.runtime.standalone.StandaloneConfig");
        Object worker = config.getConstructor(Map.class).newInstance(Map.of(
            "bootstrap.servers", "localhost:9092", "key.converter", "org.apache.kafka.connect.json.JsonConverter",
            "value.converter", "org.apache.kafka.connect.json.JsonConverter", "offset.storage.file.filename", "x"));
        Class<?> time = Class.forName("org.apache.kafka.common.utils.Time");
        Object system = time.getField("SYSTEM").get(null);
        Object connect = Class.forName("org.apache.kafka.connect.runtime.ConnectMetrics")
            .getConstructor(String.class, Class.forName("org.apache.kafka.connect.runtime.WorkerConfig"), time,
                String.class).newInstance("worker", worker, system, "cluster");
        Class<?> id = Class.forName("org.apache.kafka.connect.util.ConnectorTaskId");
        Object errors = Class.forName("org.apache.kafka.connect.runtime.errors.ErrorHandlingMetrics")
            .getConstructor(id, connect.getClass())
            .newInstance(id.getConstructor(String.class, int.class).newInstance("MirrorSourceConnector", 0), connect);
        call(errors, "recordRetry", new Class<?>[0]);
    }

    /** MirrorMaker 2's checkpoint metrics of a task checkpointing group app's src.orders-0 on tgt, once, in 40 ms. */
    private static void checkpoint(Class<?> partition, Object remote) throws Exception {
        Class<?> config = Class.forName("org.apache.kafka.connect.mirror.MirrorCheckpointTaskConfig");
        Object task = config.getConstructor(Map.class).newInstance(Map.of(
            "name", "MirrorCheckpointConnector", "connector.class", "MirrorCheckpointConnector",
            "source.cluster.alias", "src", "target.cluster.alias", "tgt", "task.assigned.groups", "app"));
        Method make = config.getDeclaredMethod("metrics");
        make.setAccessible(true);
        Object metrics = make.invoke(task);
        call(metrics, "checkpointLatency", new Class<?>[] {partition, String.class, long.class}, remote, "app", 40L);
    }

    private static void call(Object target, String name, Class<?>[] types, Object... args) throws Exception {
        Method method = target.getClass().getDeclaredMethod(name, types);
        method.setAccessible(true);
        method.invoke(target, args);
    }
}
