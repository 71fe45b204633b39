// Read a Hadoop *-site.xml the way every Hadoop client and daemon does (org.apache.hadoop.conf.Configuration, no
// default resources) and print each property as Configuration.get returns it (variables expanded).
//
// Run (Java 17 single-file source launch) with pyspark's jars on the class path:
//   java -cp '.venv/lib/python3.11/site-packages/pyspark/jars/*' jvm/tools/HadoopConfRead.java FILE
// One line per property, sorted by name: NAME<TAB>BASE64(UTF-8 of the value). Exit 3 when the file cannot be parsed.
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

public class HadoopConfRead {
    public static void main(String[] args) {
        Configuration conf = new Configuration(false);
        conf.addResource(new Path(args[0]));
        try {
            TreeSet<String> names = new TreeSet<>();
            for (Map.Entry<String, String> entry : conf) names.add(entry.getKey());
            for (String name : names) {
                String value = conf.get(name);
                System.out.println(name + "\t" + Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8)));
            }
        } catch (RuntimeException e) {
            System.err.println(e);
            System.exit(3);
        }
    }
}
