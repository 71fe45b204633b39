package securemirror.source;

import java.util.List;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One task of a batch: its slot (the same partitions go to the same slot in every batch, see
 * {@link MirrorStream#slot}), the ranges it reads with one consumer, and how many partitions of the query's topics go
 * to the slot, with records in this batch or not: the consumer's fetch is sized for those
 * ({@link SourceSettings#consumerSettings}), so it stays the same from one batch to the next and the slot keeps its
 * consumer (sized for the ranges alone, it changed with nearly every batch of a lightly loaded topic, and each change
 * closed the slot's consumer and logged in a new one).
 */
record Slice(int slot, List<Range> ranges, int partitions) implements InputPartition {
}
