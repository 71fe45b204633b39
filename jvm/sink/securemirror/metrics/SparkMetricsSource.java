package securemirror.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import org.apache.spark.SparkEnv;
import org.apache.spark.metrics.source.Source;

/**
 * The figures as a source of Spark's metrics system on the driver: one gauge per topic-partition and attribute (see
 * {@link Names#metric}), which Spark's sinks expose (JmxSink, PrometheusServlet, Graphite, ...). Spark copies the
 * source's registry into its own under {@code <spark.metrics.namespace>.driver.kafka.connect.mirror.} when the source
 * is registered, and follows the gauges added later (Dropwizard's registries listen to a registered child).
 */
final class SparkMetricsSource implements Source {
    static final String NAME = Names.DOMAIN;
    private final MetricRegistry registry = new MetricRegistry();

    @Override
    public String sourceName() {
        return NAME;
    }

    @Override
    public MetricRegistry metricRegistry() {
        return registry;
    }

    /** Registers this source with the metrics system of the driver's Spark, if this JVM runs one. */
    boolean register() {
        SparkEnv env = SparkEnv.get();
        if (env == null) {
            return false;
        }
        env.metricsSystem().registerSource(this);
        return true;
    }

    /** One gauge per attribute, named by {@code metric} (an attribute's name in this source's registry). */
    void add(java.util.function.UnaryOperator<String> metric, Figures figures) {
        for (String attribute : figures.attributes()) {
            Gauge<Double> gauge = () -> figures.value(attribute, System.currentTimeMillis());
            registry.register(metric.apply(attribute), gauge);
        }
    }
}
