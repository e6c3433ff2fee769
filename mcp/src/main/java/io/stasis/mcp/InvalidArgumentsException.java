package io.stasis.mcp;

/** A tool was called with arguments its schema does not allow; the message names the argument. */
final class InvalidArgumentsException extends IllegalArgumentException {
    InvalidArgumentsException(String message) {
        super(message);
    }
}
