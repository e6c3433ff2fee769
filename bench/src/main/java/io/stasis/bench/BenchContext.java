package io.stasis.bench;

/**
 * What every scenario works with.
 *
 * @param service  the private service and its client
 * @param counts   iteration counts, already scaled
 * @param progress progress lines on stderr
 * @param sampler  runs warm-up and measured iterations
 */
record BenchContext(PrivateService service, Options.Counts counts, Progress progress, Sampler sampler) {
}
