import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.SecurityUtils;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;

/**
 * Kafka's own StandardAuthorizer (the KRaft brokers' authorizer, Kafka 4.2 in .deps) deciding batches of cases for
 * tests/unit/preflight/test_authorizer.py. One JVM serves the whole test module: it reads batches from stdin, each
 * a run of tab-separated lines ended by {@code end}, and prints one line per {@code ask}, ALLOWED or DENIED, then
 * flushes:
 *
 * <pre>
 * authorizer  ALLOW_EVERYONE_IF_NO_ACL(true|false)  SUPER_USERS(';'-joined)
 * acl         RESOURCE_TYPE  PATTERN_TYPE  NAME  PRINCIPAL  HOST  OPERATION  PERMISSION
 * ask         PRINCIPAL  HOST  OPERATION  RESOURCE_TYPE  NAME
 * end
 * </pre>
 *
 * Each batch starts a new authorizer, configured as a broker's (super.users, allow.everyone.if.no.acl.found), loads
 * its ACLs as the metadata image hands them over (loadSnapshot, then completeInitialLoad) and asks each action from
 * a client at HOST. A line it cannot read ends the program with status 2 and the line on stderr.
 */
public final class StandardAuthorizerCases {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Map<String, Object> configs = new HashMap<>();
        Map<Uuid, StandardAcl> acls = new HashMap<>();
        List<String[]> asks = new ArrayList<>();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] f = line.split("\t", -1);
            try {
                switch (f[0]) {
                    case "authorizer" -> {
                        configs = Map.of(
                            StandardAuthorizer.ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, f[1],
                            StandardAuthorizer.SUPER_USERS_CONFIG, f[2]);
                        acls = new HashMap<>();
                        asks = new ArrayList<>();
                    }
                    case "acl" -> acls.put(Uuid.randomUuid(), new StandardAcl(
                        ResourceType.fromString(f[1]), f[3], PatternType.fromString(f[2]), f[4], f[5],
                        AclOperation.fromString(f[6]), AclPermissionType.fromString(f[7])));
                    case "ask" -> asks.add(f);
                    case "end" -> {
                        decide(configs, acls, asks, out);
                        out.flush();
                    }
                    default -> throw new IllegalArgumentException("unknown line kind " + f[0]);
                }
            } catch (RuntimeException e) {
                System.err.println("cannot read " + line + ": " + e);
                System.exit(2);
            }
        }
    }

    private static final Metrics METRICS = new Metrics();

    private static void decide(Map<String, Object> configs, Map<Uuid, StandardAcl> acls, List<String[]> asks,
                               PrintStream out) throws Exception {
        try (StandardAuthorizer authorizer = new StandardAuthorizer();
             PluginMetricsImpl metrics = new PluginMetricsImpl(METRICS, Map.of("case", "authorizer"))) {
            authorizer.withPluginMetrics(metrics);  // as a broker wraps its authorizer (it counts each decision)
            authorizer.configure(configs);
            authorizer.loadSnapshot(acls);
            authorizer.completeInitialLoad();
            for (String[] f : asks) {
                Action action = new Action(AclOperation.fromString(f[3]),
                    new ResourcePattern(ResourceType.fromString(f[4]), f[5], PatternType.LITERAL), 1, false, false);
                AuthorizationResult result = authorizer.authorize(context(f[1], f[2]), List.of(action)).get(0);
                out.println(result);
            }
        }
    }

    private static AuthorizableRequestContext context(String principal, String host) throws Exception {
        KafkaPrincipal caller = SecurityUtils.parseKafkaPrincipal(principal);
        InetAddress address = InetAddress.getByName(host);
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return ListenerName.normalised("SASL_SSL").value(); }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_SSL; }
            @Override public KafkaPrincipal principal() { return caller; }
            @Override public InetAddress clientAddress() { return address; }
            @Override public int requestType() { return 0; }
            @Override public int requestVersion() { return 0; }
            @Override public String clientId() { return "secure-mirror-test"; }
            @Override public int correlationId() { return 0; }
        };
    }
}
