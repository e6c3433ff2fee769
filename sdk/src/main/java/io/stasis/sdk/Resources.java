package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * CPU, memory, process and disk limits of a sandbox. In a request, a null field takes the
 * server's default; in a response all four are set.
 *
 * @param cpus     CPUs, 0.1 to 64
 * @param memoryMb memory in MiB, 16 to 1048576
 * @param pids     maximum number of processes, 16 to 1000000
 * @param diskMb   room in MiB for what the sandbox writes itself, its template's (or a fork's
 *                 inherited) files not counted (64 up to the server's maximum, 65536 unless
 *                 configured); past it writes fail inside the sandbox with "Disk quota exceeded"
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Resources(Double cpus, Integer memoryMb, Integer pids, Integer diskMb) {
    /** Without a disk size (the server's default). */
    public Resources(Double cpus, Integer memoryMb, Integer pids) {
        this(cpus, memoryMb, pids, null);
    }
}
