package io.stasis.cli;

/** A configuration or argument problem found after parsing (e.g. no API key): exit code 2. */
final class UsageException extends RuntimeException {
    UsageException(String message) {
        super(message);
    }
}
