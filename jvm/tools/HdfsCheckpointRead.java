// Read what lag, verify and the fingerprint check need from a Spark checkpoint on a remote file system (hdfs://
// ...) through Hadoop's FileSystem, logged in from a keytab when the cluster uses Kerberos. Nothing is copied out.
//
// Run (Java 17 single-file source launch) with the Hadoop configuration folder and pyspark's jars on the class path:
//   java -Djava.security.krb5.conf=KRB5 -cp 'CONF_DIR:PYSPARK/jars/*' HdfsCheckpointRead.java LOCATION PRINCIPAL KEYTAB
// (PRINCIPAL and KEYTAB "-" without Kerberos). Output, one line each, fields tab-separated:
//   offsets<TAB>ID,ID...     batch ids of offsets/        commits<TAB>ID,ID...   batch ids of commits/
//   file<TAB>NAME<TAB>BASE64 the newest committed offsets file (NAME offsets/ID), sources/0/0 and the fingerprint
//                            file named by the 4th argument, each when it exists
// Exit 0; 3 with a message on stderr when the checkpoint cannot be read.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;

public class HdfsCheckpointRead {
    public static void main(String[] args) throws Exception {
        String location = args[0].replaceAll("/+$", ""), principal = args[1], keytab = args[2], fingerprint = args[3];
        Configuration conf = new Configuration();
        UserGroupInformation.setConfiguration(conf);
        if (!principal.equals("-")) UserGroupInformation.loginUserFromKeytab(principal, keytab);
        try {
            FileSystem fs = new Path(location).getFileSystem(conf);
            TreeSet<Long> offsets = ids(fs, location + "/offsets"), commits = ids(fs, location + "/commits");
            System.out.println("offsets\t" + join(offsets));
            System.out.println("commits\t" + join(commits));
            for (Long id : offsets.descendingSet()) {
                if (commits.contains(id)) { file(fs, location, "offsets/" + id); break; }
            }
            file(fs, location, "sources/0/0");
            file(fs, location, fingerprint);
        } catch (java.io.IOException e) {
            System.err.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            System.exit(3);
        }
    }

    static TreeSet<Long> ids(FileSystem fs, String folder) throws java.io.IOException {
        TreeSet<Long> found = new TreeSet<>();
        Path path = new Path(folder);
        if (!fs.exists(path)) return found;
        for (FileStatus status : fs.listStatus(path)) {
            String name = status.getPath().getName();
            if (name.matches("[0-9]+")) found.add(Long.parseLong(name));
        }
        return found;
    }

    static String join(TreeSet<Long> ids) {
        List<String> parts = new ArrayList<>();
        for (Long id : ids) parts.add(id.toString());
        return String.join(",", parts);
    }

    static void file(FileSystem fs, String location, String name) throws java.io.IOException {
        Path path = new Path(location + "/" + name);
        if (!fs.exists(path)) return;
        try (FSDataInputStream in = fs.open(path)) {
            byte[] data = in.readAllBytes();
            System.out.println("file\t" + name + "\t" + Base64.getEncoder().encodeToString(data));
        }
    }
}
