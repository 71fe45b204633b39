package securemirror.source;

import java.util.List;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One task of a batch: its slot (the same partitions go to the same slot in every batch, see
 * {@link MirrorStream#slot}) and the ranges it reads with one consumer.
 */
record Slice(int slot, List<Range> ranges) implements InputPartition {
}
