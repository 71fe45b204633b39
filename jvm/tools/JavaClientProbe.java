// Pre-flight's Java probe: what Kafka's Java client (the one Spark's Kafka connector and MirrorMaker 2 use) makes
// of a rendered client.properties: it starts an Admin client from the file, connects, authenticates and asks the
// cluster for its authorized operations (KIP-430).
//
// Run (Java 17 single-file source launch):
//   java -Djava.security.krb5.conf=KRB5 -cp '.deps/kafka/lib/*' jvm/tools/JavaClientProbe.java TIMEOUT_MS < requests
// One request per line: SIDE<TAB>PATH of a client.properties (the file, never a value, so no secret is on an
// argument list). One answer per line, tab-separated:
//   SIDE ok CLUSTER_ID BROKERS OPERATIONS(comma-separated; "-" when the broker reports none)
//   SIDE error EXCEPTION_CLASS MESSAGE (of the innermost cause)
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.acl.AclOperation;

public class JavaClientProbe {
    public static void main(String[] args) throws Exception {
        int timeout = Integer.parseInt(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] request = line.split("\t", 2);
            System.out.println(request[0] + "\t" + answer(request[1], timeout));
            System.out.flush();
        }
    }

    /** "ok", cluster id, broker count, authorized operations ("-" none, "?" not reported by the brokers). */
    private static String describe(Admin admin, int timeout, boolean withOperations) throws Exception {
        DescribeClusterResult result = admin.describeCluster(
                new DescribeClusterOptions().includeAuthorizedOperations(withOperations).timeoutMs(timeout));
        String id = result.clusterId().get(timeout, TimeUnit.MILLISECONDS);
        int brokers = result.nodes().get(timeout, TimeUnit.MILLISECONDS).size();
        Set<AclOperation> operations = result.authorizedOperations().get(timeout, TimeUnit.MILLISECONDS);
        if (!withOperations || operations == null) return "ok\t" + id + "\t" + brokers + "\t?";
        Set<String> names = new TreeSet<>();
        for (AclOperation op : operations) names.add(op.name());
        return "ok\t" + id + "\t" + brokers + "\t" + (names.isEmpty() ? "-" : String.join(",", names));
    }

    private static String answer(String path, int timeout) {
        Properties properties = new Properties();
        try (InputStream stream = new FileInputStream(path)) {
            properties.load(stream);
            properties.put("request.timeout.ms", String.valueOf(timeout));
            properties.put("default.api.timeout.ms", String.valueOf(timeout));
            try (Admin admin = Admin.create(properties)) {
                try {
                    return describe(admin, timeout, true);
                } catch (java.util.concurrent.ExecutionException e) {
                    // Brokers before Kafka 2.3 cannot report authorized operations: ask again without them.
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnsupportedVersionException)) throw e;
                    return describe(admin, timeout, false);
                }
            }
        } catch (Throwable e) {
            Throwable cause = e;
            while (cause.getCause() != null && cause.getCause() != cause) cause = cause.getCause();
            String message = String.valueOf(cause.getMessage()).replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
            return "error\t" + cause.getClass().getSimpleName() + "\t" + message;
        }
    }
}
