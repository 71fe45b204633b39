// Parse JAAS configuration the way Kafka and the JDK do, and print what they understood as JSON.
//
// Run (Java 17 single-file source launch, from the repository root):
//   java -cp '.deps/kafka/lib/*' jvm/tools/JaasParse.java < requests.jsonl
//
// Each input line is one JSON request:
//   {"kind": "inline", "text": "<a sasl.jaas.config value>"}           Kafka's JaasConfig (KIP-85)
//   {"kind": "file", "path": "<jaas.conf>", "section": "KafkaClient"} the JDK's ConfigFile
//   {"kind": "properties", "path": "<x.properties>", "key": "sasl.jaas.config"}
//                                                                     Kafka's Utils.loadProps, then JaasConfig
// Each output line is {"ok": true, "entries": [{"loginModule", "controlFlag", "options"}]}
// or {"ok": false, "error": "<the parser's message>"}.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.URIParameter;
import java.util.Map;
import java.util.TreeMap;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.utils.Utils;

public class JaasParse {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.isBlank()) {
                System.out.println(JSON.writeValueAsString(answer(JSON.readTree(line))));
            }
        }
    }

    private static ObjectNode answer(JsonNode request) {
        ObjectNode out = JSON.createObjectNode();
        try {
            out.set("entries", describe(parse(request)));
            out.put("ok", true);
        } catch (Exception e) {
            out.put("ok", false);
            out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return out;
    }

    private static AppConfigurationEntry[] parse(JsonNode request) throws Exception {
        switch (request.get("kind").asText()) {
            case "inline":
                return kafkaClientEntries(request.get("text").asText());
            case "file":
                URIParameter uri = new URIParameter(new File(request.get("path").asText()).toURI());
                AppConfigurationEntry[] entries = Configuration.getInstance("JavaLoginConfig", uri)
                        .getAppConfigurationEntry(request.path("section").asText("KafkaClient"));
                if (entries == null) throw new IllegalArgumentException("no such section");
                return entries;
            case "properties":
                String value = Utils.loadProps(request.get("path").asText())
                        .getProperty(request.path("key").asText("sasl.jaas.config"));
                if (value == null) throw new IllegalArgumentException("no such key");
                return kafkaClientEntries(value);
            default:
                throw new IllegalArgumentException("unknown kind");
        }
    }

    /** What a Kafka client does with its sasl.jaas.config (org.apache.kafka.common.security.JaasConfig). */
    private static AppConfigurationEntry[] kafkaClientEntries(String jaasConfig) {
        JaasContext context = JaasContext.loadClientContext(Map.of("sasl.jaas.config", new Password(jaasConfig)));
        return context.configurationEntries().toArray(new AppConfigurationEntry[0]);
    }

    private static ArrayNode describe(AppConfigurationEntry[] entries) {
        ArrayNode list = JSON.createArrayNode();
        for (AppConfigurationEntry entry : entries) {
            ObjectNode node = list.addObject();
            node.put("loginModule", entry.getLoginModuleName());
            node.put("controlFlag", flagName(entry.getControlFlag()));
            ObjectNode options = node.putObject("options");
            for (Map.Entry<String, ?> option : new TreeMap<>(entry.getOptions()).entrySet()) {
                options.put(option.getKey(), String.valueOf(option.getValue()));
            }
        }
        return list;
    }

    private static String flagName(AppConfigurationEntry.LoginModuleControlFlag flag) {
        // toString() is "LoginModuleControlFlag: required"
        String text = flag.toString();
        return text.substring(text.indexOf(':') + 1).trim();
    }
}
