package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * CPU, memory and process limits of a sandbox. In a request, a null field takes the server's
 * default; in a response all three are set.
 *
 * @param cpus     CPUs, 0.1 to 64
 * @param memoryMb memory in MiB, 16 to 1048576
 * @param pids     maximum number of processes, 16 to 1000000
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Resources(Double cpus, Integer memoryMb, Integer pids) {
}
