package io.stasis.core.template;

/** A build's step (or its pre-boot) failed, as {@code failure} reports it; the build ends there. */
final class BuildFailed extends RuntimeException {
    final BuildReport.Failure failure;

    BuildFailed(BuildReport.Failure failure) {
        super(failure.message(), null, false, false);
        this.failure = failure;
    }
}
