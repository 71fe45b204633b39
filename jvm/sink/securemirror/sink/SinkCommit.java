package securemirror.sink;

import java.util.List;

import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** What a task sends the driver when its part of a write is on the target: its figures. */
final class SinkCommit implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    final List<Figures> figures;

    SinkCommit(List<Figures> figures) {
        this.figures = figures;
    }
}
