// Java's KafkaShareConsumer as the benchmark peer of kafkawire's ShareConsumer (benchmarks/bench_share.py):
// joins share group <group>, polls with implicit acknowledgement until <records> records arrived (each
// record's value length is read), commitSync() accepts the last poll, and prints one JSON line with the
// timed region: from creating the consumer to the commit's answer, wall seconds and the JVM's CPU seconds.
//
// Usage: ShareConsume <bootstrap> <topic> <group> <records> <maxPollRecords>

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class ShareConsume {
    public static void main(String[] args) {
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long want = Long.parseLong(args[3]);
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[2]);
        props.put("max.poll.records", args[4]);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        long got = 0;
        long bytes = 0;
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(args[1]));
            while (got < want) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(1000));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    got++;
                    bytes += r.value() == null ? 0 : r.value().length;
                }
            }
            consumer.commitSync();
            double wall = (System.nanoTime() - t0) / 1e9;
            double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
            System.out.println("{\"records\": " + got + ", \"bytes\": " + bytes + ", \"wall\": " + wall + ", \"cpu\": " + cpu + "}");
        }
    }
}
