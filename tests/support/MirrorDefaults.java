import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.mirror.ConfigPropertyFilter;
import org.apache.kafka.connect.mirror.MirrorMakerConfig;
import org.apache.kafka.connect.mirror.MirrorSourceConfig;
import org.apache.kafka.connect.mirror.MirrorSourceConnector;
import org.apache.kafka.connect.mirror.SourceAndTarget;
import org.apache.kafka.connect.mirror.TopicFilter;
import org.apache.kafka.storage.internals.log.LogConfig;

/**
 * What MirrorMaker 2 (Kafka 4.2's connect-mirror in .deps) excludes by default, and what it excludes under a rendered
 * mm2.properties, for tests/unit/render/test_mm2_exclusions.py. Arguments: the mm2.properties file, the source alias
 * and the target alias. Prints, tab-separated:
 *
 * <pre>
 * default  topics.exclude             a flow's setting when MirrorMaker 2's file sets none ('|'-joined)
 * default  config.properties.exclude  the same
 * config   NAME  true|false           for each topic config Kafka knows (LogConfig): does the default filter copy it
 * topic    NAME  true|false  true|false   for each topic name read from stdin: whether a flow with no settings of
 *                                          its own replicates it, and whether the rendered file's flow does
 * </pre>
 *
 * Each flow's config is the one a dedicated MirrorMaker 2 (connect-mirror-maker.sh) gives its source connector:
 * MirrorMakerConfig's, from settings naming only the two clusters, or from the rendered file as the script loads it.
 * The filters are those MirrorSourceConnector takes from that config (topicFilter(), configPropertyFilter():
 * package-private, reached by reflection).
 */
public final class MirrorDefaults {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        SourceAndTarget pair = new SourceAndTarget(args[1], args[2]);
        MirrorSourceConfig bare = flow(Map.of("clusters", args[1] + ", " + args[2],
            args[1] + ".bootstrap.servers", "localhost:1", args[2] + ".bootstrap.servers", "localhost:2"), pair);
        out.println("default\ttopics.exclude\t" + String.join("|", bare.getList("topics.exclude")));
        String configsLeftOut = String.join("|", bare.getList("config.properties.exclude"));
        out.println("default\tconfig.properties.exclude\t" + configsLeftOut);
        ConfigPropertyFilter configs = (ConfigPropertyFilter) call(bare, "configPropertyFilter");
        for (String name : LogConfig.configNames()) {
            out.println("config\t" + name + "\t" + configs.shouldReplicateConfigProperty(name));
        }
        TopicFilter byDefault = (TopicFilter) call(bare, "topicFilter");
        MirrorSourceConfig renderedFlow = flow(Utils.propsToStringMap(Utils.loadProps(args[0])), pair);
        TopicFilter rendered = (TopicFilter) call(renderedFlow, "topicFilter");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String name = in.readLine(); name != null; name = in.readLine()) {
            out.println("topic\t" + name + "\t" + byDefault.shouldReplicateTopic(name) + "\t"
                + rendered.shouldReplicateTopic(name));
        }
        out.flush();
    }

    /** The source connector's config of the flow {@code pair} under a dedicated MirrorMaker 2's settings. */
    private static MirrorSourceConfig flow(Map<String, String> settings, SourceAndTarget pair) {
        return new MirrorSourceConfig(
            new MirrorMakerConfig(settings).connectorBaseConfig(pair, MirrorSourceConnector.class));
    }

    private static Object call(MirrorSourceConfig config, String method) throws Exception {
        Method m = MirrorSourceConfig.class.getDeclaredMethod(method);
        m.setAccessible(true);
        return m.invoke(config);
    }
}
