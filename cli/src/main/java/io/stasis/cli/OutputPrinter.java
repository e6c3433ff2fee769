package io.stasis.cli;

import io.stasis.sdk.ExecOutputListener;

/**
 * Prints a background process's output as it arrives: its stdout to ours, its stderr to ours,
 * each chunk flushed at once, and a note on stderr where the server had dropped output (it keeps
 * only the last part of each stream), so that a gap in a log is never silent.
 */
final class OutputPrinter implements ExecOutputListener {
    private final CliIo io;
    private final ExecOutputListener streams;

    OutputPrinter(CliIo io) {
        this.io = io;
        this.streams = ExecOutputListener.writingTo(io.out(), io.err());
    }

    @Override
    public void onStdout(byte[] chunk) {
        streams.onStdout(chunk);
    }

    @Override
    public void onStderr(byte[] chunk) {
        streams.onStderr(chunk);
    }

    @Override
    public void onDropped(String stream, long from, long to) {
        io.out().flush();
        io.err().println("stasis: " + HumanFormat.size(to - from) + " of " + stream + " (bytes " + from + " to " + to
                + ") were dropped by the server, which keeps the last part of each stream");
    }
}
