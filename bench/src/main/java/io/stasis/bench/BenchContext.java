package io.stasis.bench;

/**
 * What every scenario works with.
 *
 * @param service  the private service and its client
 * @param counts   iteration counts, already scaled
 * @param maxSize  largest memory or root size a scenario may use, bytes ({@code --max-size})
 * @param outputSize bytes a process writes per output streaming sample ({@code --output-size}, at most {@code maxSize})
 * @param followersInFlight streams the followers scenario may be opening at once ({@code --followers-in-flight})
 * @param blobRootSize the tree blob-dedup checkpoints twice, bytes ({@code --blob-root-size}, at most {@code maxSize})
 * @param blobDataSize what each blob-throughput sample stores, bytes ({@code --blob-data-size}, at most {@code maxSize})
 * @param progress progress lines on stderr
 * @param sampler  runs warm-up and measured iterations
 * @param runtime  the runtime of the scenarios' sandboxes: runc or gvisor
 */
record BenchContext(PrivateService service, Options.Counts counts, long maxSize, long outputSize, int followersInFlight,
                    long blobRootSize, long blobDataSize, Progress progress,
                    Sampler sampler, String runtime) {

    /**
     * Whether the floors of runc and CRIU on the sandbox's own bundle apply: not to gVisor sandboxes,
     * whose raw floor is runsc's own (measured beside the benchmark by the peer script, same session).
     */
    boolean runcFloors() {
        return runtime.equals("runc");
    }
}
