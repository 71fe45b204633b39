// Read aliases from Hadoop credential providers (jceks://file/..., localjceks://file/..., jceks://hdfs@nn:8020/...)
// through Hadoop's own CredentialProviderFactory, as Hive, Ranger and Spark read them. The values go to stdout, a pipe
// to the Python process that started this one (secure_mirror/profile/credstore_reader.py): never to argv, a file or
// a log. The keystore's own password is Hadoop's: HADOOP_CREDSTORE_PASSWORD, else the file the configuration's
// hadoop.security.credstore.java-keystore-provider.password-file names on the class path, else "none".
//
// Run (Java 17) with pyspark's jars (Hadoop's client) on the class path, the Hadoop configuration folder before them
// for a store on HDFS:
//   java -cp '[CONF_DIR:]TOOLS:PYSPARK/jars/*' CredentialRead PROVIDER ALIAS [PROVIDER ALIAS ...]
// One line per pair, in order, fields tab-separated:
//   value<TAB>BASE64(UTF-8 of the value)
//   missing<TAB>N        the store opened and holds N aliases, not this one (0: empty, or no store at that path)
//   error<TAB>MESSAGE    the store could not be opened (Hadoop's exception, on one line; it names no value)
// Exit 0; 2 on wrong arguments. Anything Hadoop or its logging prints goes to stderr, never between the answers.
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.alias.CredentialProvider;
import org.apache.hadoop.security.alias.CredentialProviderFactory;

public class CredentialRead {
    public static void main(String[] args) {
        PrintStream answers = System.out;
        System.setOut(System.err); // only our answers on stdout
        if (args.length == 0 || args.length % 2 != 0) {
            System.err.println("usage: CredentialRead PROVIDER ALIAS [PROVIDER ALIAS ...]");
            System.exit(2);
        }
        for (int i = 0; i < args.length; i += 2) {
            answers.println(answer(args[i], args[i + 1]));
        }
        answers.flush();
    }

    static String answer(String provider, String alias) {
        try {
            CredentialProvider store = open(provider);
            CredentialProvider.CredentialEntry entry = store.getCredentialEntry(alias);
            if (entry == null || entry.getCredential() == null) {
                return "missing\t" + store.getAliases().size();
            }
            return "value\t" + encode(entry.getCredential());
        } catch (IOException | RuntimeException e) {
            return "error\t" + oneLine(e);
        }
    }

    static CredentialProvider open(String provider) throws IOException {
        Configuration conf = new Configuration(); // core-site.xml from the class path (a password file, HDFS)
        conf.set(CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH, provider);
        List<CredentialProvider> stores = CredentialProviderFactory.getProviders(conf);
        if (stores.size() != 1) {
            throw new IOException("no credential provider understands " + provider);
        }
        return stores.get(0);
    }

    static String encode(char[] value) {
        ByteBuffer buffer = StandardCharsets.UTF_8.encode(CharBuffer.wrap(value));
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        String encoded = Base64.getEncoder().encodeToString(bytes);
        Arrays.fill(bytes, (byte) 0);
        Arrays.fill(buffer.array(), (byte) 0);
        return encoded;
    }

    static String oneLine(Throwable e) {
        StringBuilder text = new StringBuilder(e.getClass().getSimpleName() + ": " + e.getMessage());
        for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            text.append(" (").append(cause.getClass().getSimpleName()).append(": ").append(cause.getMessage()).append(")");
        }
        return text.toString().replaceAll("[\\r\\n\\t]+", " ");
    }
}
