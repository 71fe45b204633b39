// `hadoop credential create ALIAS -provider URI` (Hadoop's own CredentialShell, exactly as the hadoop command runs
// it) with the value read from stdin instead of typed at its prompt: the sandbox's stores and the tests' are made the
// way a Hadoop administrator makes them, and the value is never on a command line (-value would put it there).
//
// Run (Java 17 single-file source launch) with Hadoop's jars (.deps/hadoop/lib) on the class path:
//   java -cp '.deps/hadoop/lib/*' jvm/tools/CredentialCreate.java create ALIAS -provider URI < value
// Any CredentialShell arguments are passed on; stdin is its one answer to both prompts (the value and its repeat), a
// trailing newline dropped. The keystore password is Hadoop's: HADOOP_CREDSTORE_PASSWORD, else "none".
// Exit: CredentialShell's (0 created).
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.alias.CredentialShell;
import org.apache.hadoop.util.ToolRunner;

public class CredentialCreate {
    public static void main(String[] args) throws Exception {
        char[] value = stdin();
        CredentialShell shell = new CredentialShell();
        shell.setPasswordReader(new CredentialShell.PasswordReader() {
            @Override
            public char[] readPassword(String prompt) {
                return value.clone();
            }

            @Override
            public void format(String message) {
                System.err.println(message);
            }
        });
        System.exit(ToolRunner.run(new Configuration(), shell, args));
    }

    static char[] stdin() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.in.transferTo(bytes);
        String text = bytes.toString(StandardCharsets.UTF_8);
        if (text.endsWith("\n")) text = text.substring(0, text.length() - 1);
        if (text.endsWith("\r")) text = text.substring(0, text.length() - 1);
        return text.toCharArray();
    }
}
