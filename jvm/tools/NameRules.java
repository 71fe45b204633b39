// Ask Kafka's own classes which principal name a broker derives, and print their answers as JSON: the oracle of
// tests/unit/profile/test_kafka_names_oracle.py for secure_mirror/profile/kafka_names.py.
//
// Run (Java 17 single-file source launch, from the repository root):
//   java -cp '.deps/kafka/lib/*' jvm/tools/NameRules.java < batches.jsonl
//
// Each input line is a batch: a JSON array of requests, answered by one output line, a JSON array of answers in
// the same order (the process stays up for the next batch until its input ends).
//   {"kind": "kerberos", "rules": ["RULE:...", "DEFAULT"], "realm": "<broker default realm>", "name": "a/b@R"}
//        KerberosShortNamer.fromUnparsedRules(realm, rules), KerberosName.parse(name), shortName, as the broker's
//        SaslChannelBuilder and DefaultKafkaPrincipalBuilder do
//   {"kind": "ssl", "rules": "<ssl.principal.mapping.rules>", "name": "CN=...,O=..."}
//        SslPrincipalMapper.fromRules(rules).getName(name), as SslChannelBuilder and the principal builder do
// An answer is {"ok": true, "name": "<short name>"} or
// {"ok": false, "stage": "rules"|"name"|"apply", "error": "<exception class>", "message": "<its message>"}.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.security.kerberos.KerberosName;
import org.apache.kafka.common.security.kerberos.KerberosShortNamer;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;

public class NameRules {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            ArrayNode answers = JSON.createArrayNode();
            for (JsonNode request : JSON.readTree(line)) {
                answers.add(answer(request));
            }
            out.println(JSON.writeValueAsString(answers));
        }
    }

    private static ObjectNode answer(JsonNode request) {
        ObjectNode out = JSON.createObjectNode();
        String stage = "rules";
        try {
            String name = request.get("name").asText();
            if ("ssl".equals(request.get("kind").asText())) {
                SslPrincipalMapper mapper = SslPrincipalMapper.fromRules(request.get("rules").asText());
                stage = "apply";
                out.put("name", mapper.getName(name));
            } else {
                List<String> rules = new ArrayList<>();
                request.get("rules").forEach(rule -> rules.add(rule.asText()));
                KerberosShortNamer namer = KerberosShortNamer.fromUnparsedRules(request.get("realm").asText(), rules);
                stage = "name";
                KerberosName parsed = KerberosName.parse(name);
                stage = "apply";
                out.put("name", namer.shortName(parsed));
            }
            out.put("ok", true);
        } catch (Exception | StackOverflowError e) {
            out.put("ok", false);
            out.put("stage", stage);
            out.put("error", e.getClass().getSimpleName());
            out.put("message", String.valueOf(e.getMessage()));
        }
        return out;
    }
}
