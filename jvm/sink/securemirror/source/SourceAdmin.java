package securemirror.source;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import securemirror.ride.Waits;

/**
 * The driver's questions to the source cluster, one admin client for the query: which partitions the pattern selects
 * (one topic listing and one batched describe), and their earliest and latest offsets (one batched request each;
 * latest is the last stable offset when the source is read read_committed).
 */
final class SourceAdmin implements AutoCloseable {
    private static final long ASK_SECONDS = 120;
    private final Admin admin;
    private final Pattern pattern;
    private final IsolationLevel isolation;
    private final long rideMs;

    SourceAdmin(SourceSettings settings) {
        this.admin = Admin.create(settings.adminSettings());
        this.rideMs = settings.rideThroughMs;
        this.pattern = Pattern.compile(settings.pattern);
        this.isolation = settings.readCommitted() ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED;
    }

    /** Every partition of every topic the pattern matches (internal topics never), asked again through a bad minute. */
    List<TopicPartition> partitions() {
        return Waits.ride("source", "list and describe the selected topics", rideMs,
                          () -> partitionsAsked(ASK_SECONDS));
    }

    /**
     * Every partition of every topic the pattern matches, asked once: a source that does not answer within
     * {@code seconds} for the listing, and again for the descriptions, is an exception, never a wait.
     */
    List<TopicPartition> partitionsAsked(long seconds) {
        Collection<String> names = ask(admin.listTopics(new ListTopicsOptions().listInternal(false)).names(), seconds);
        List<String> selected = names.stream().filter(name -> pattern.matcher(name).matches()).sorted().toList();
        List<TopicPartition> found = new ArrayList<>();
        if (selected.isEmpty()) {
            return found;
        }
        Map<String, KafkaFuture<TopicDescription>> described = admin.describeTopics(selected).topicNameValues();
        for (String topic : selected) {
            try {
                TopicDescription description = described.get(topic).get(seconds, TimeUnit.SECONDS);
                description.partitions().forEach(p -> found.add(new TopicPartition(topic, p.partition())));
            } catch (ExecutionException error) {
                if (!(error.getCause() instanceof UnknownTopicOrPartitionException)) {  // deleted since the listing
                    throw failure("describe source topic " + topic, error);
                }
            } catch (InterruptedException | TimeoutException error) {
                throw failure("describe source topic " + topic, error);
            }
        }
        return found;
    }

    Map<TopicPartition, Long> latest(Collection<TopicPartition> partitions) {
        return offsets(partitions, OffsetSpec.latest());
    }

    Map<TopicPartition, Long> earliest(Collection<TopicPartition> partitions) {
        return offsets(partitions, OffsetSpec.earliest());
    }

    private Map<TopicPartition, Long> offsets(Collection<TopicPartition> partitions, OffsetSpec spec) {
        Map<TopicPartition, Long> found = new HashMap<>();
        if (partitions.isEmpty()) {
            return found;
        }
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        partitions.forEach(tp -> request.put(tp, spec));
        Waits.ride("source", "list the partitions' offsets", rideMs,
                   () -> ask(admin.listOffsets(request, new ListOffsetsOptions(isolation)).all()))
            .forEach((tp, info) -> found.put(tp, info.offset()));
        return found;
    }

    private static <T> T ask(KafkaFuture<T> future) {
        return ask(future, ASK_SECONDS);
    }

    private static <T> T ask(KafkaFuture<T> future, long seconds) {
        try {
            return future.get(seconds, TimeUnit.SECONDS);
        } catch (ExecutionException | InterruptedException | TimeoutException error) {
            if (error instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw failure("ask the source cluster", error);
        }
    }

    /** The Kafka client's own words (the job's exit sentence quotes them: TopicAuthorizationException ...). */
    private static IllegalStateException failure(String what, Exception error) {
        Throwable cause = error instanceof ExecutionException && error.getCause() != null ? error.getCause() : error;
        return new IllegalStateException("the mirror source could not " + what + ": " + cause, cause);
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
