// Construct Kafka's Java clients (KafkaProducer, then Admin) from rendered client.properties files, the way
// Spark and MirrorMaker 2 do at start, and say whether construction refused the configuration.
//
// Run (Java 17 single-file source launch, from the repository root):
//   java -Djava.security.krb5.conf=KRB5 -cp '.deps/kafka/lib/*' jvm/tools/ClientStart.java A.properties ...
//
// One output line per file: "OK<TAB>file", "LOGIN<TAB>file<TAB>message" (the configuration was accepted and
// the login module ran: a KDC or token endpoint that cannot be reached is not a configuration refusal), or
// "REFUSED<TAB>file<TAB>exception: message" (the chain's innermost message, on one line).
import java.io.FileInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.Properties;
import javax.security.auth.login.LoginException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class ClientStart {
    public static void main(String[] args) throws Exception {
        for (String file : args) {
            Properties props = new Properties();
            try (InputStream in = new FileInputStream(file)) {
                props.load(in);
            }
            props.put("key.serializer", ByteArraySerializer.class.getName());
            props.put("value.serializer", ByteArraySerializer.class.getName());
            props.put("max.block.ms", "1");
            System.out.println(start(file, props));
        }
    }

    static String start(String file, Properties props) {
        try {
            new KafkaProducer<byte[], byte[]>(props).close(Duration.ZERO);
            Properties admin = new Properties();
            admin.putAll(props);
            admin.remove("key.serializer");
            admin.remove("value.serializer");
            admin.remove("max.block.ms");
            Admin.create(admin).close(Duration.ZERO);
            return "OK\t" + file;
        } catch (Throwable error) {
            Throwable inner = error;
            for (Throwable t = error; t != null; t = t.getCause()) {
                inner = t;
                if (t instanceof LoginException) {
                    return "LOGIN\t" + file + "\t" + oneLine(t);
                }
            }
            return "REFUSED\t" + file + "\t" + oneLine(inner);
        }
    }

    static String oneLine(Throwable t) {
        return (t.getClass().getName() + ": " + t.getMessage()).replaceAll("\\s+", " ");
    }
}
