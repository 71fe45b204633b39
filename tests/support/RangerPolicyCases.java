import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.apache.ranger.authorization.hadoop.config.RangerPluginConfig;
import org.apache.ranger.plugin.model.RangerPolicy;
import org.apache.ranger.plugin.model.RangerServiceDef;
import org.apache.ranger.plugin.policyengine.RangerAccessRequestImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResourceImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResult;
import org.apache.ranger.plugin.policyengine.RangerPluginContext;
import org.apache.ranger.plugin.policyengine.RangerPolicyEngine;
import org.apache.ranger.plugin.policyengine.RangerPolicyEngineImpl;
import org.apache.ranger.plugin.policyengine.RangerPolicyEngineOptions;
import org.apache.ranger.plugin.util.JsonUtilsV2;
import org.apache.ranger.plugin.util.ServicePolicies;

/**
 * Apache Ranger's own policy engine (ranger-plugins-common, in .deps/ranger/lib) judging rendered Ranger policies for
 * tests/unit/render/test_ranger_engine.py. One JVM serves the whole test module: it reads batches from stdin, each a
 * run of tab-separated lines ended by {@code end}, and prints one line per {@code ask}, ALLOWED or DENIED, then
 * flushes:
 *
 * <pre>
 * policies  SERVICE  FILE          (a JSON list of RangerPolicy, as render writes ranger/SIDE.policies.json)
 * ask       USER  ACCESS_TYPE  RESOURCE  VALUE
 * end
 * </pre>
 *
 * Each batch builds a new engine from Ranger's kafka service definition as the jar ships it
 * (service-defs/ranger-servicedef-kafka.json) and the batch's policies, as a Kafka broker's Ranger plugin builds one
 * from its policy cache, and asks each access as RangerKafkaAuthorizer does: the user (no groups), the access type,
 * one resource value. A line it cannot read ends the program with status 2 and the line on stderr.
 */
public final class RangerPolicyCases {
    private static final String SERVICE_DEF = "service-defs/ranger-servicedef-kafka.json";

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        RangerServiceDef serviceDef = serviceDef();
        String service = null;
        List<RangerPolicy> policies = new ArrayList<>();
        List<String[]> asks = new ArrayList<>();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] f = line.split("\t", -1);
            try {
                switch (f[0]) {
                    case "policies" -> {
                        service = f[1];
                        String text = Files.readString(Path.of(f[2]), StandardCharsets.UTF_8);
                        policies.addAll(Arrays.asList(JsonUtilsV2.getMapper().readValue(text, RangerPolicy[].class)));
                    }
                    case "ask" -> asks.add(f);
                    case "end" -> {
                        decide(serviceDef, service, policies, asks, out);
                        out.flush();
                        policies = new ArrayList<>();
                        asks = new ArrayList<>();
                    }
                    default -> throw new IllegalArgumentException("unknown line kind " + f[0]);
                }
            } catch (Exception e) {
                System.err.println("cannot read " + line + ": " + e);
                System.exit(2);
            }
        }
    }

    private static RangerServiceDef serviceDef() throws Exception {
        try (InputStream stream = RangerServiceDef.class.getClassLoader().getResourceAsStream(SERVICE_DEF)) {
            String text = new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            return JsonUtilsV2.getMapper().readValue(text, RangerServiceDef.class);
        }
    }

    private static void decide(RangerServiceDef serviceDef, String service, List<RangerPolicy> policies,
                               List<String[]> asks, PrintStream out) {
        for (RangerPolicy policy : policies) {
            if (!service.equals(policy.getService())) {
                throw new IllegalArgumentException("policy " + policy.getName() + " is for " + policy.getService());
            }
        }
        long id = 1;
        for (RangerPolicy policy : policies) {
            policy.setId(id++);  // Ranger Admin numbers the policies it stores
        }
        ServicePolicies servicePolicies = new ServicePolicies();
        servicePolicies.setServiceName(service);
        servicePolicies.setServiceDef(serviceDef);
        servicePolicies.setPolicies(policies);
        servicePolicies.setPolicyVersion(1L);
        RangerPolicyEngineOptions options = new RangerPolicyEngineOptions();
        RangerPluginConfig config = new RangerPluginConfig("kafka", service, "kafka", null, null, options);
        RangerPolicyEngine engine = new RangerPolicyEngineImpl(servicePolicies, new RangerPluginContext(config), null);
        for (String[] f : asks) {
            RangerAccessResourceImpl resource = new RangerAccessResourceImpl();
            resource.setValue(f[3], f[4]);
            RangerAccessRequestImpl request = new RangerAccessRequestImpl();
            request.setResource(resource);
            request.setUser(f[1]);
            request.setUserGroups(Collections.emptySet());
            request.setAccessType(f[2]);
            request.setAction(f[2]);
            request.setClientIPAddress("10.0.0.5");
            RangerAccessResult result = engine.evaluatePolicies(request, RangerPolicy.POLICY_TYPE_ACCESS, null);
            out.println(result != null && result.getIsAllowed() ? "ALLOWED" : "DENIED");
        }
    }
}
