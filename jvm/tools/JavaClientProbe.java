// Pre-flight's Java probe: what Kafka's Java client (the one Spark's Kafka connector and MirrorMaker 2 use) makes
// of a rendered client.properties: it starts an Admin client from those settings, connects, authenticates and asks the
// cluster for its authorized operations (KIP-430).
//
// Run (Java 17 single-file source launch):
//   java -Djava.security.krb5.conf=KRB5 -cp '.deps/kafka/lib/*' jvm/tools/JavaClientProbe.java TIMEOUT_MS < requests
// One request per line on stdin: SIDE<TAB>the client.properties text in Base64 (through the pipe, so no secret is on
// an argument list or in a file), and <TAB>token to also try Kafka delegation tokens. One answer per line, tab-separated:
//   SIDE ok CLUSTER_ID BROKERS OPERATIONS(comma-separated; "-" when the broker reports none) [TOKEN...]
//   SIDE error EXCEPTION_CLASS MESSAGE (of the innermost cause)
// With token, TOKEN is "token ok LIFETIME_MS MAX_LIFETIME_MS" when the brokers issued a token to this identity,
// a second client logged in with it (SCRAM-SHA-512, tokenauth=true, as Spark's executors do) and was answered,
// and the token was expired again; "token create|login|expire EXCEPTION_CLASS MESSAGE" names the step that
// failed. The token's id and HMAC are never printed.
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
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
            String[] request = line.split("\t", 3);
            boolean token = request.length > 2 && request[2].equals("token");
            System.out.println(request[0] + "\t" + answer(request[1], timeout, token));
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

    /** Create a token, log in with it, expire it: "token ok ..." or the failed step and its error. */
    private static String token(Admin admin, Properties properties, int timeout) {
        org.apache.kafka.common.security.token.delegation.DelegationToken token;
        try {
            token = admin.createDelegationToken(new CreateDelegationTokenOptions()).delegationToken()
                .get(timeout, TimeUnit.MILLISECONDS);
        } catch (Throwable e) {
            return "token\tcreate\t" + failure(e);
        }
        String refused = null;
        try {
            Properties login = new Properties();
            for (String key : properties.stringPropertyNames()) {
                if (!key.startsWith("sasl.")) login.put(key, properties.getProperty(key));
            }
            login.put("sasl.mechanism", "SCRAM-SHA-512");
            login.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "tokenauth=true username=\"" + token.tokenInfo().tokenId() + "\" password=\""
                + token.hmacAsBase64String() + "\";");
            for (int attempt = 1; ; attempt++) {  // a token reaches every broker's cache through the metadata log
                try (Admin withToken = Admin.create(login)) {
                    withToken.describeCluster(new DescribeClusterOptions().timeoutMs(timeout)).clusterId()
                        .get(timeout, TimeUnit.MILLISECONDS);
                    break;
                } catch (java.util.concurrent.ExecutionException e) {
                    if (attempt == 3) throw e;
                    Thread.sleep(1000);
                }
            }
        } catch (Throwable e) {
            refused = "token\tlogin\t" + failure(e);
        }
        try {  // expired even when the login failed: no token of pre-flight's outlives it
            admin.expireDelegationToken(token.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1))
                .expiryTimestamp().get(timeout, TimeUnit.MILLISECONDS);
        } catch (Throwable e) {
            return refused != null ? refused : "token\texpire\t" + failure(e);
        }
        long issued = token.tokenInfo().issueTimestamp();
        return refused != null ? refused : "token\tok\t" + (token.tokenInfo().expiryTimestamp() - issued) + "\t"
            + (token.tokenInfo().maxTimestamp() - issued);
    }

    private static String failure(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) cause = cause.getCause();
        String message = String.valueOf(cause.getMessage()).replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
        return cause.getClass().getSimpleName() + "\t" + message;
    }

    private static String answer(String encoded, int timeout, boolean token) {
        Properties properties = new Properties();
        // The client settings come through the pipe, Base64 of a properties text: they hold the side's secrets, so
        // they are never written to a file.
        byte[] text = Base64.getDecoder().decode(encoded);
        try (InputStream stream = new ByteArrayInputStream(text)) {
            properties.load(stream);
            properties.put("request.timeout.ms", String.valueOf(timeout));
            properties.put("default.api.timeout.ms", String.valueOf(timeout));
            try (Admin admin = Admin.create(properties)) {
                try {
                    String described = describe(admin, timeout, true);
                    return token ? described + "\t" + token(admin, properties, timeout) : described;
                } catch (java.util.concurrent.ExecutionException e) {
                    // Brokers before Kafka 2.3 cannot report authorized operations: ask again without them.
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnsupportedVersionException)) throw e;
                    return describe(admin, timeout, false);
                }
            }
        } catch (Throwable e) {
            return "error\t" + failure(e);
        }
    }
}
