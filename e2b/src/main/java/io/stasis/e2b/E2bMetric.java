package io.stasis.e2b;

import io.stasis.sdk.SandboxInfo;
import io.stasis.sdk.StasisClient;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One reading of a sandbox's use, as both E2B shapes show it: the control plane's
 * {@code SandboxMetric} and envd's {@code Metrics}. Stasis reads on demand, so each is a reading of now.
 *
 * @param diskUsed  what counts against its disk limit, in bytes
 * @param diskTotal the disk limit in bytes; null when the sandbox reports none
 */
record E2bMetric(Instant timestamp, double cpuCount, double cpuUsedPct, long memUsed, long memTotal, long diskUsed, Long diskTotal) {

    static E2bMetric of(StasisClient client, SandboxInfo sandbox) {
        var reading = client.sandboxes().metrics(sandbox.id());
        Long disk = sandbox.resources() != null && sandbox.resources().diskMb() != null ? (long) sandbox.resources().diskMb() << 20 : null;
        return new E2bMetric(reading.timestamp(), reading.cpuCount(), reading.cpuUsedPercent(), reading.memoryBytes(),
                reading.memoryLimitBytes(), reading.diskBytes(), disk);
    }

    /** The control plane's {@code SandboxMetric}. */
    Map<String, Object> controlPlane() {
        var metric = new LinkedHashMap<String, Object>();
        metric.put("timestamp", timestamp.toString());
        metric.put("timestampUnix", timestamp.getEpochSecond());
        metric.put("cpuCount", cpuCount);
        metric.put("cpuUsedPct", cpuUsedPct);
        metric.put("memUsed", memUsed);
        metric.put("memTotal", memTotal);
        metric.put("diskUsed", diskUsed);
        if (diskTotal != null) metric.put("diskTotal", diskTotal);
        return metric;
    }

    /** envd's {@code Metrics}, in its field names. */
    Map<String, Object> envd() {
        var metrics = new LinkedHashMap<String, Object>();
        metrics.put("ts", timestamp.getEpochSecond());
        metrics.put("cpu_count", (int) Math.ceil(cpuCount));
        metrics.put("cpu_used_pct", cpuUsedPct);
        metrics.put("mem_used", memUsed);
        metrics.put("mem_used_mib", memUsed >> 20);
        metrics.put("mem_total", memTotal);
        metrics.put("mem_total_mib", memTotal >> 20);
        metrics.put("disk_used", diskUsed);
        if (diskTotal != null) metrics.put("disk_total", diskTotal);
        return metrics;
    }
}
