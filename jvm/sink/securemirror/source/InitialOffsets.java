package securemirror.source;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkContext;

/**
 * The first batch's start, kept in the source's checkpoint folder as Spark's Kafka source keeps it
 * ({@code sources/0/0}: a version line, then the offsets' JSON), so a query that stops before its first batch is
 * logged starts from the same place again (with {@code startingOffsets: latest}, records written in between are
 * not skipped), and {@code secure-mirror lag} and {@code verify} read it alike. Local or HDFS: Hadoop's file system.
 */
final class InitialOffsets {
    private static final String VERSION = "v1";

    private InitialOffsets() {
    }

    static PartitionOffsets readOrWrite(String folder, Supplier<PartitionOffsets> first) {
        Configuration conf = SparkContext.getOrCreate().hadoopConfiguration();
        Path file = new Path(folder, "0");
        try {
            FileSystem fs = file.getFileSystem(conf);
            if (fs.exists(file)) {
                try (InputStream in = fs.open(file)) {
                    String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    int json = text.indexOf('{');
                    if (json < 0) {
                        throw new IllegalStateException("the mirror source's " + file + " holds no offsets: start "
                            + "over with a new checkpoint location");
                    }
                    return PartitionOffsets.parse(text.substring(json));
                }
            }
            PartitionOffsets offsets = first.get();
            fs.mkdirs(file.getParent());
            Path temporary = new Path(folder, ".0." + java.util.UUID.randomUUID() + ".tmp");
            try (OutputStream out = fs.create(temporary, false)) {
                out.write((VERSION + "\n" + offsets.json()).getBytes(StandardCharsets.UTF_8));
            }
            if (!fs.rename(temporary, file)) {
                fs.delete(temporary, false);
                throw new IOException("could not rename " + temporary + " to " + file);
            }
            return offsets;
        } catch (IOException error) {
            throw new IllegalStateException("the mirror source could not keep its starting offsets in " + file + ": "
                + error.getMessage(), error);
        }
    }
}
