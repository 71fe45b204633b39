package securemirror.sink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;

/**
 * One write to the target, as a batch (from {@code foreachBatch}) or a stream. Each task writes and, with
 * exactly_once, commits its own transactions ({@link MirrorDataWriter}); the driver only gathers the figures.
 */
final class MirrorWrite implements Write, BatchWrite, StreamingWrite {
    private final SinkSettings settings;
    private final MirrorTable table;

    MirrorWrite(SinkSettings settings, MirrorTable table) {
        this.settings = settings;
        this.table = table;
    }

    @Override
    public String description() {
        return settings.toString();
    }

    @Override
    public String toString() {
        return description();
    }

    @Override
    public boolean useCommitCoordinator() {
        return true;  // one attempt per task commits (with exactly_once, the others are fenced anyway)
    }

    @Override
    public BatchWrite toBatch() {
        return this;
    }

    @Override
    public StreamingWrite toStreaming() {
        return this;
    }

    @Override
    public CustomMetric[] supportedCustomMetrics() {
        return SinkMetrics.supported();
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new MirrorWriterFactory(settings);
    }

    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
        return new MirrorWriterFactory(settings);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        report(settings.reportKey, messages);
    }

    /**
     * A streaming write's epoch (continuous processing): its figures go under {@code <report key>-<epoch>}, as a
     * continuous query reports no progress of its own (Spark 4.0's ContinuousExecution never finishes a trigger).
     */
    @Override
    public void commit(long epochId, WriterCommitMessage[] messages) {
        report(settings.reportKey == null ? null : settings.reportKey + "-" + epochId, messages);
    }

    private void report(String key, WriterCommitMessage[] messages) {
        String json = Figures.toJson(figures(messages));
        if (key != null) {
            Reports.put(key, json);
        }
        table.reported(Map.of("figures", json));
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
        // each task has aborted (or committed) its own transactions; nothing is held on the driver
    }

    @Override
    public void abort(long epochId, WriterCommitMessage[] messages) {
        abort(messages);
    }

    private static Map<String, Figures> figures(WriterCommitMessage[] messages) {
        List<Figures> all = new ArrayList<>();
        for (WriterCommitMessage message : messages) {
            if (message instanceof SinkCommit commit) {
                all.addAll(commit.figures);
            }
        }
        return Figures.merge(all);
    }
}
