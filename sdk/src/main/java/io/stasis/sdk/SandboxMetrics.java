package io.stasis.sdk;

import java.time.Instant;

/**
 * What a sandbox uses now ({@code GET /v1/sandboxes/{id}/metrics}).
 *
 * @param timestamp        when it was read
 * @param cpuCount         its CPU limit
 * @param cpuUsedPercent   of its CPUs (100: all busy), since the previous reading (since it was made, at the first)
 * @param cpuSeconds       CPU time of its processes so far (since they last started)
 * @param memoryBytes      memory it holds in RAM
 * @param swappedBytes     memory of it in swap (standby)
 * @param memoryLimitBytes its memory limit
 * @param diskBytes        what counts against its disk size: what it wrote and something still holds, and what it inherited
 * @param diskInheritedBytes of that, what deleted sandboxes it was forked from wrote and it carries since
 * @param diskLimitBytes   its disk size
 */
public record SandboxMetrics(Instant timestamp, double cpuCount, double cpuUsedPercent, double cpuSeconds, long memoryBytes,
                             long swappedBytes, long memoryLimitBytes, long diskBytes, long diskInheritedBytes, long diskLimitBytes) {
}
