// Read rendered files back the way the JVM programs that consume them do, and print what they understood.
//
// Run (Java 17 single-file source launch) with pyspark's jars on the class path:
//   java -cp '.venv/lib/python3.11/site-packages/pyspark/jars/*' jvm/tools/ReadBack.java < requests
//
// One request per line, tab-separated; one answer line per request, fields tab-separated, each field escaped
// (\\ \t \n \r as backslash sequences, other characters below U+0020 as \\uXXXX):
//   properties<TAB>PATH   java.util.Properties.load(InputStream): key, value, key, value ... in key order
//   split<TAB>TEXT        Spark's Utils.splitCommandString (executors), then the launcher's
//                         CommandBuilderUtils.parseOptionString (a client-mode driver): "spark" words..., "launcher" words...
// An answer starting with "error" carries the reader's message.
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;

public class ReadBack {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            List<String> out = new ArrayList<>();
            try {
                String[] request = line.split("\t", 2);
                String argument = unescape(request[1]);
                if (request[0].equals("properties")) properties(argument, out);
                else if (request[0].equals("split")) split(argument, out);
                else throw new IllegalArgumentException("unknown request " + request[0]);
            } catch (Throwable e) {
                out.clear();
                out.add("error");
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                out.add(cause.getClass().getSimpleName() + ": " + cause.getMessage());
            }
            StringBuilder answer = new StringBuilder();
            for (int i = 0; i < out.size(); i++) answer.append(i == 0 ? "" : "\t").append(escape(out.get(i)));
            System.out.println(answer);
        }
    }

    private static void properties(String path, List<String> out) throws Exception {
        Properties properties = new Properties();
        try (InputStream stream = new FileInputStream(path)) {
            properties.load(stream);
        }
        out.add("ok");
        for (var entry : new TreeMap<>(properties).entrySet()) {
            out.add((String) entry.getKey());
            out.add((String) entry.getValue());
        }
    }

    @SuppressWarnings("unchecked")
    private static void split(String text, List<String> out) throws Exception {
        out.add("spark");
        Class<?> utils = Class.forName("org.apache.spark.util.Utils");
        Object words = utils.getMethod("splitCommandString", String.class).invoke(null, text);
        scala.collection.Iterator<String> it = ((scala.collection.Iterable<String>) words).iterator();
        while (it.hasNext()) out.add(it.next());
        out.add("launcher");
        Class<?> builder = Class.forName("org.apache.spark.launcher.CommandBuilderUtils");
        Method parse = builder.getDeclaredMethod("parseOptionString", String.class);
        parse.setAccessible(true);
        out.addAll((List<String>) parse.invoke(null, text));
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '\\') b.append("\\\\");
            else if (c == '\t') b.append("\\t");
            else if (c == '\n') b.append("\\n");
            else if (c == '\r') b.append("\\r");
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.toString();
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 == s.length()) { b.append(c); continue; }
            char n = s.charAt(++i);
            if (n == 't') b.append('\t');
            else if (n == 'n') b.append('\n');
            else if (n == 'r') b.append('\r');
            else if (n == 'u') { b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16)); i += 4; }
            else b.append(n);
        }
        return b.toString();
    }
}
