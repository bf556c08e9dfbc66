package io.flinkgo.shim.demo;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgents;

/**
 * {@code make demo}: a Flink job on a local MiniCluster that feeds generated orders through the
 * Go order-scoring agent and prints what comes back.
 */
public final class OrderScoringDemo {
    private OrderScoringDemo() {}

    public static void main(String[] args) throws Exception {
        String binary = System.getProperty("flinkgo.binary", "");
        if (binary.isBlank()) {
            throw new IllegalArgumentException("set -Dflinkgo.binary to the absolute path of bin/orderscoring");
        }
        long orders = Long.getLong("demo.orders", 20_000);
        int customers = Integer.getInteger("demo.customers", 50);

        Configuration conf = new Configuration();
        conf.setString("rest.port", "0");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
        env.enableCheckpointing(1000);

        RowTypeInfo type = (RowTypeInfo) Types.ROW_NAMED(
                new String[] {"customer", "order_id", "amount"}, Types.STRING, Types.LONG, Types.DOUBLE);
        DataGeneratorSource<Row> source = new DataGeneratorSource<>(
                i -> Row.of("customer-" + (i % customers), i, 5.0 + (i * 7919 % 1000) / 10.0), orders, type);
        DataStream<Row> in = env.fromSource(source, WatermarkStrategy.noWatermarks(), "orders");

        GoAgentConfig config = GoAgentConfig.builder().binary(binary).build();
        DataStream<Row> scored = GoAgents.connect(in.keyBy(r -> (String) r.getField(0), Types.STRING), config);

        long start = System.nanoTime();
        long rows = 0;
        long flagged = 0;
        List<Row> first = new ArrayList<>();
        try (CloseableIterator<Row> it = scored.executeAndCollect("flinkgo demo")) {
            while (it.hasNext()) {
                Row r = it.next();
                rows++;
                if (Boolean.TRUE.equals(r.getField("flagged"))) {
                    flagged++;
                }
                if (first.size() < 10) {
                    first.add(r);
                }
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println("columns: " + String.join(", ", ((RowTypeInfo) scored.getType()).getFieldNames()));
        first.forEach(r -> System.out.println("  " + r));
        System.out.printf("%d orders in, %d scored rows out (%d flagged) in %.1f s: %.0f rows/s%n",
                orders, rows, flagged, seconds, rows / seconds);
        if (rows != orders) {
            throw new IllegalStateException("expected " + orders + " output rows, got " + rows);
        }
    }
}
