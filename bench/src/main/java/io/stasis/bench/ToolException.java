package io.stasis.bench;

/** An external tool (runc, btrfs) failed; the message quotes the tool's own words. */
final class ToolException extends RuntimeException {
    ToolException(String message) {
        super(message);
    }

    ToolException(String message, Throwable cause) {
        super(message, cause);
    }
}
