package io.stasis.cli;

/** A command could not do what was asked, for a reason already worded for the user: exit code 1. */
final class CommandFailure extends RuntimeException {
    CommandFailure(String message) {
        super(message);
    }
}
